package harness

import "testing"

// TestArenaPlacementIgnoresHistory checks the property the CUDA backend relies on: a case's buffers land at the
// same offsets whatever other cases ran (and freed, in whatever order) before it, above the run's long-lived
// buffers.
func TestArenaPlacementIgnoresHistory(t *testing.T) {
	caseBufs := []int64{3 << 20, 100, 7 << 20} // one case: two inputs and an output
	place := func(a *placement, sizes []int64) []int64 {
		t.Helper()
		var offs []int64
		for _, n := range sizes {
			off, ok := a.place(n)
			if !ok {
				t.Fatalf("place(%d): no room in %d", n, a.size)
			}
			if off%arenaAlign != 0 {
				t.Fatalf("place(%d) = %d: not %d-aligned", n, off, arenaAlign)
			}
			offs = append(offs, off)
		}
		return offs
	}
	free := func(a *placement, offs []int64, order []int) {
		t.Helper()
		for _, i := range order {
			if !a.release(offs[i]) {
				t.Fatalf("release(%d): not a live block", offs[i])
			}
		}
	}

	fresh := &placement{size: 1 << 30}
	copyBufs := place(fresh, []int64{64 << 20, 64 << 20})
	want := place(fresh, caseBufs)

	histories := map[string]func(a *placement){
		"nothing before": func(*placement) {},
		"another case, freed first to last": func(a *placement) {
			offs := place(a, []int64{5 << 20, 1, 9 << 20, 4096})
			free(a, offs, []int{0, 1, 2, 3})
		},
		"another case, freed out of order": func(a *placement) {
			offs := place(a, []int64{5 << 20, 1, 9 << 20, 4096})
			free(a, offs, []int{2, 0, 3, 1})
		},
		"scratch freed before its buffers": func(a *placement) {
			offs := place(a, []int64{33 << 20, 12, 2 << 20})
			free(a, offs, []int{2, 1, 0})
		},
	}
	for name, before := range histories {
		a := &placement{size: 1 << 30}
		place(a, []int64{64 << 20, 64 << 20})
		before(a)
		if a.live() != len(copyBufs) {
			t.Errorf("%s: %d blocks live after the earlier case ended, want %d", name, a.live(), len(copyBufs))
		}
		got := place(a, caseBufs)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: buffer %d at %d, want %d (placement depends on what ran before)", name, i, got[i], want[i])
			}
		}
	}
}

// TestArenaFull checks that a block that does not fit is refused (the backend then falls back to the driver's
// allocator) and that the stack is unchanged by the refusal.
func TestArenaFull(t *testing.T) {
	a := &placement{size: 8 << 20}
	off, ok := a.place(5 << 20)
	if !ok || off != 0 {
		t.Fatalf("place(5 MiB) = %d, %v", off, ok)
	}
	if _, ok := a.place(4 << 20); ok { // would start at 6 MiB (aligned) and end at 10 MiB
		t.Fatal("place(4 MiB) fitted in an 8 MiB arena holding 5 MiB")
	}
	if a.live() != 1 {
		t.Fatalf("a refused block changed the stack: %d live", a.live())
	}
	if a.release(12345) {
		t.Fatal("released an offset that was never placed")
	}
	if !a.release(off) || a.live() != 0 || a.top != 0 {
		t.Fatalf("after freeing everything: live %d, top %d", a.live(), a.top)
	}
}
