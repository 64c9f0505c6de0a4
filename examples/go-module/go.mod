module example.com/scaleadd

go 1.26.0

require github.com/kernelwatch/kernelwatch v0.0.0-00010101000000-000000000000

require (
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
	github.com/google/uuid v1.3.0 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da // indirect
	gorgonia.org/cu v0.9.6 // indirect
)

replace github.com/kernelwatch/kernelwatch => ../..
