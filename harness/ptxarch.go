package harness

import (
	"fmt"
	"strconv"
	"strings"
)

// moduleArch is which GPUs may load embedded module name (cuda/ptx/<name>.ptx), from its name's suffix:
//
//   - no _smXY suffix: every GPU the backend runs on (compute_75 PTX);
//   - <module>_smXY: compute capability X.Y and later — PTX of a compute_XY target is forward compatible, the
//     driver JIT-compiles it for newer GPUs;
//   - <module>_smXYa: exactly X.Y — the architecture-specific features of sm_90a (wgmma, setmaxnreg) are not
//     forward compatible, and a driver refuses compute_90a PTX on any other GPU.
//
// cc is major·10 + minor; exact says that only that compute capability loads it. A name whose _sm suffix is
// not of those forms is an error, rather than a module that silently never loads.
func moduleArch(name string) (cc int, exact bool, err error) {
	i := strings.LastIndex(name, "_sm")
	if i < 0 {
		return 0, false, nil
	}
	arch := name[i+len("_sm"):]
	if a, ok := strings.CutSuffix(arch, "a"); ok {
		arch, exact = a, true
	}
	n, err := strconv.Atoi(arch)
	if len(arch) < 2 || len(arch) > 3 || err != nil || n < 10 {
		return 0, false, fmt.Errorf("module %s: suffix _sm%s is not _smXY or _smXYa (compute capability X.Y)", name, name[i+len("_sm"):])
	}
	return n, exact, nil
}

// moduleLoads reports whether a GPU of compute capability cc may load module name (moduleArch).
func moduleLoads(name string, cc int) (bool, error) {
	arch, exact, err := moduleArch(name)
	if err != nil {
		return false, err
	}
	if exact {
		return cc == arch, nil
	}
	return cc >= arch, nil
}
