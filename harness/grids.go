package harness

// Grids are the shapes the harness sweeps every family over, per device kind (Device.Kind). A family may skip
// shapes it cannot run (Family.Supports), or declare its own sizes instead (Family.Grid: the sequence families).
// Shapes are rows × cols as in the benchmark names.
var Grids = map[string][]Shape{
	// cpu: rows·cols = 2^18–2^20 (1–4 MiB in fp32), cols 256 … 65536, plus a decode-like shape, so that
	// `go test -run '^$' -bench . -benchtime=100ms ./kernels/` takes well under a minute on two cores.
	"cpu": {
		{Rows: 1024, Cols: 256},
		{Rows: 256, Cols: 4096},
		{Rows: 16, Cols: 65536},
		{Rows: 8, Cols: 4096}, // decode: a few tokens
	},
	// cuda: rows·cols = 2^26–2^28 (256 MiB–1 GiB in fp32), cols 256 … 262144, plus a decode-like shape.
	"cuda": {
		{Rows: 262144, Cols: 256},
		{Rows: 65536, Cols: 1024},
		{Rows: 32768, Cols: 4096},
		{Rows: 8192, Cols: 16384},
		{Rows: 4096, Cols: 65536},
		{Rows: 1024, Cols: 262144},
		{Rows: 32, Cols: 4096}, // decode: a few tokens
	},
}
