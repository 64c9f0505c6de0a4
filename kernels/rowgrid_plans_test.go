package kernels

// rowGridPlans lists the row_grid plans TestCUDARowGrid (and, with all, TestCUDARowTune) runs for case c on a GPU
// of sms multiprocessors: rowGridPlan's first; with all, also groups of half and a quarter as many (their blocks'
// slices a half and a quarter as long), and rings and lags the kernels allow (lag 3 and 4, a ring of lag + 3 and
// of rowGridRing rows), where the GPU runs them.
func rowGridPlans(c Case, sms int, all bool) []rowPlan {
	def, ok := rowGridPlan(c, 90, sms)
	if !ok {
		return nil
	}
	ps := []rowPlan{def}
	if !all {
		return ps
	}
	seen := map[rowPlan]bool{def: true}
	for _, g := range []int{def.groups, def.groups / 2, def.groups / 4} {
		for _, lag := range []int{rowGridMinLag, rowGridMinLag + 1} {
			for _, ring := range []int{lag + 3, rowGridRing} {
				p := def
				p.groups, p.lag, p.ring = g, lag, ring
				if !seen[p] && rowGridCheck(p, c, 90, sms) == "" {
					seen[p] = true
					ps = append(ps, p)
				}
			}
		}
	}
	return ps
}
