"""Tests of kwbench, the part of the example that needs no GPU.

Run: python3 -m unittest test_kwbench (example_test.go runs it in CI).
"""

import unittest

import kwbench


class TestClass(unittest.TestCase):
    def test_slug_as_hwclass(self):
        # The cases of internal/hwclass's TestSlug.
        for model, want in {
            "AMD EPYC 9654 96-Core Processor": "amd-epyc-9654-96-core-processor",
            "Intel(R) Xeon(R) CPU @ 2.20GHz": "intel-r-xeon-r-cpu-2-20ghz",
            "  NVIDIA H100 80GB HBM3 ": "nvidia-h100-80gb-hbm3",
            "": "unknown",
            "--": "unknown",
            "Neoverse-V2 (Grace) r0p0 with 144 cores!": "neoverse-v2-grace-r0p0-with-144-cores",
            "Ünïcode 7": "n-code-7",
        }.items():
            self.assertEqual(kwbench.slug(model), want, model)

    def test_gpu_class(self):
        self.assertEqual(kwbench.gpu_class("NVIDIA H100 80GB HBM3"), "gpu-nvidia-h100-80gb-hbm3")
        self.assertEqual(kwbench.gpu_class("Tesla T4"), "gpu-nvidia-tesla-t4")


class TestSelected(unittest.TestCase):
    name = "BenchmarkRMSNorm/dtype=bf16/rows=4096/cols=4096/impl=triton"

    def test_levels(self):
        for regexp, want in [
            ("", True),
            (".", True),
            ("RMSNorm", True),
            ("Softmax", False),
            ("RMSNorm/dtype=fp32", False),
            ("RMSNorm/dtype=bf16", True),
            ("/dtype=bf16/rows=4096", True),
            ("//rows=16384", False),
            ("Softmax|RMSNorm////impl=triton$", True),
            ("RMSNorm/////too-deep", False),
            ("RMSNorm/dtype=(bf16|fp32)", True),  # "|" inside parentheses does not split
        ]:
            self.assertEqual(kwbench.selected(regexp, self.name), want, regexp)

    def test_split(self):
        self.assertEqual(kwbench.split_bench("A|B/x=[a/b]|(c/d)/e"), [["A"], ["B", "x=[a/b]"], ["(c/d)", "e"]])


class TestPlan(unittest.TestCase):
    def test_environment(self):
        p = kwbench.Plan({"KERNELWATCH_SIDE": "current", "KERNELWATCH_ROUND": "3", "KERNELWATCH_COUNT": "2",
                          "KERNELWATCH_BENCH": "RMSNorm/dtype=fp32", "KERNELWATCH_BENCHTIME": "50x"})
        self.assertEqual((p.side, p.round, p.count, p.launches, p.seconds), ("current", "3", 2, 50, 0.0))
        self.assertFalse(p.wants(TestSelected.name))
        p = kwbench.Plan({})
        self.assertEqual((p.count, p.launches, p.bench), (1, 100, ""))
        self.assertTrue(p.wants(TestSelected.name))

    def test_benchtime(self):
        self.assertEqual(kwbench.launches("200ms"), (0, 0.2))
        self.assertEqual(kwbench.launches("1s"), (0, 1.0))
        for bad in ("0x", "fast", "10"):
            with self.assertRaises(ValueError):
                kwbench.launches(bad)


class TestFormat(unittest.TestCase):
    def test_result_line(self):
        line = kwbench.result_line("BenchmarkRMSNorm/dtype=bf16", 100, [(41234.5, "ns/op"), (3255.1, "GB/s"), (0.25, "pct-x")])
        self.assertEqual(line, "BenchmarkRMSNorm/dtype=bf16-1\t100\t41234.50 ns/op\t3255.10 GB/s\t0.25 pct-x")
        for bad in [("RMSNorm", [(1.0, "ns/op")]), ("BenchmarkA b", [(1.0, "ns/op")]),
                    ("BenchmarkA", [(float("nan"), "ns/op")]), ("BenchmarkA", [(-1.0, "ns/op")])]:
            with self.assertRaises(ValueError):
                kwbench.result_line(bad[0], 1, bad[1])

    def test_segment_and_config(self):
        self.assertEqual(kwbench.segment("Dtype", "bf16"), "dtype=bf16")
        self.assertEqual(kwbench.segment("shape", "4096 x/4096"), "shape=4096_x_4096")
        self.assertEqual(kwbench.config_line("GPU", "NVIDIA  H100\n80GB"), "gpu: NVIDIA H100 80GB")
        self.assertEqual(kwbench.fail_lines("BenchmarkA", "wrong\n result"), "--- FAIL: BenchmarkA\n    wrong result")

    def test_median(self):
        self.assertEqual(kwbench.median([3, 1, 2]), 2)
        self.assertEqual(kwbench.median([4, 1, 2, 3]), 2.5)
        with self.assertRaises(ValueError):
            kwbench.median([])


if __name__ == "__main__":
    unittest.main()
