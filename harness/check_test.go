package harness

import (
	"math"
	"os"
	"testing"
)

// TestMain opens the backends built in (Main), as a package of families does.
func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestCheckCatchesUnwrittenElement makes sure the poisoning works: a copy that skips the last element of the
// last row must fail, and so must one that is off by one ulp somewhere.
func TestCheckCatchesUnwrittenElement(t *testing.T) {
	skipLast := *CopyFamily
	skipLast.Name = "CopySkipLast"
	RegisterCPU(&skipLast, Fused, func(l *CPULaunch) {
		n := l.Rows*l.Cols - 1
		if l.DType == BF16 {
			copy(l.Out[0].U16[:n], l.In[0].U16)
		} else {
			copy(l.Out[0].F32[:n], l.In[0].F32)
		}
	})
	offByOne := *CopyFamily
	offByOne.Name = "CopyOffByOne"
	RegisterCPU(&offByOne, Fused, func(l *CPULaunch) {
		copyFused(l)
		if l.DType == BF16 {
			l.Out[0].U16[l.Rows*l.Cols/2]++
		} else {
			l.Out[0].F32[l.Rows*l.Cols/2] = math.Nextafter32(l.Out[0].F32[l.Rows*l.Cols/2], 10)
		}
	})
	be := NewCPU(2)
	defer be.Close()
	for _, f := range []*Family{&skipLast, &offByOne} {
		for _, dt := range StorageDTypes {
			c := Case{DType: dt, Shape: Shape{Rows: 3, Cols: 100}}
			if _, err := CheckCase(be, f, c, Fused, CaseSeed(t), nil); err == nil {
				t.Errorf("%s %v passed the check", f.Name, dt)
			}
		}
	}
}

// TestPoison checks that a poisoned buffer reads back as NaN in every float format.
func TestPoison(t *testing.T) {
	for name, be := range mainBackends {
		for _, dt := range []DType{FP32, BF16, E4M3} {
			b, err := be.Alloc(dt, 5)
			if err != nil {
				t.Fatal(err)
			}
			if err := be.Poison(b); err != nil {
				t.Fatal(err)
			}
			v, err := download(be, b)
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range v {
				if !math.IsNaN(x) {
					t.Errorf("%s %v: element %d poisoned to %v, want NaN", name, dt, i, x)
				}
			}
			be.Free(b)
		}
	}
}
