#!/usr/bin/env python3
"""batch_cli_test.py — `neurowarp-cli batch LIST.csv --out DIR` (app/cli_batch.c, issue 16),
run by ctest under the system Python (nibabel, numpy): a batch of three pairs writes every
pair's outputs and the summary table; a second run skips all three without touching them; a
run killed (SIGKILL) after its first pair, or stopped by Ctrl-C, leaves only complete pairs
and the next run finishes without redoing them; a row whose file is missing fails with the
file's name while the others go on (exit status 1); the chain affine,demons writes both
stages' outputs and hands the affine transform to demons; bad lists and methods are refused.
With a second argument (mpirun) the same batch under 2 and 4 ranks.

The pairs are cli_demons_test.py's phantom (a textured blob and the blob shifted), small and
with few iterations so that each test takes seconds on two CPU cores.

Usage: batch_cli_test.py /path/to/neurowarp-cli [/path/to/mpirun]
"""
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_demons_test as cdt  # noqa: E402 (exits 77 without nibabel)

MPIRUN = None
FAST = "[demons]\nlevels=1\niterations=3\n[affine]\nlevels=1\niterations=30\n"
# ~1 s a pair on one core: long enough to stop a batch between pairs
SLOW = "[demons]\nlevels=1\niterations=400\ntolerance=0\n"
# One OpenMP thread per process: the tests run beside others (ctest -j), where OpenMP teams
# that spin on shared cores made a 1 s pair take a minute.
ENV = dict(os.environ, OMP_NUM_THREADS="1")


def run(*args, timeout=120, cmd=None):
    p = subprocess.run((cmd or [cdt.CLI]) + list(args), capture_output=True, text=True,
                       timeout=timeout, env=ENV)
    return p.returncode, p.stdout, p.stderr


class BatchBase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="nw-batch-")
        f, fl, _ = cdt.phantom(0.0)
        cdt.save(self.path("fixed.nii.gz"), f)
        cdt.save(self.path("fl.nii.gz"), fl)
        for k, shift in enumerate((1.0, 0.5, -1.0)):
            m, ml, _ = cdt.phantom(shift)
            cdt.save(self.path(f"m{k}.nii.gz"), m)
            cdt.save(self.path(f"ml{k}.nii.gz"), ml)
        self.out = self.path("out")
        self.params(FAST)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def params(self, text):
        with open(self.path("p.ini"), "w") as fh:
            fh.write(text)

    def write_list(self, rows, header="id,fixed,moving,fixed_labels,moving_labels"):
        """rows: lists of fields; paths relative to the list's folder."""
        with open(self.path("list.csv"), "w") as fh:
            fh.write(header + "\n")
            for r in rows:
                fh.write(",".join(r) + "\n")
        return self.path("list.csv")

    def three(self):
        return self.write_list([[f"p{k}", "fixed.nii.gz", f"m{k}.nii.gz", "fl.nii.gz",
                                 f"ml{k}.nii.gz"] for k in range(3)])

    def batch(self, lst, *extra, cmd=None):
        return run(lst, "--out", self.out, "--params", self.path("p.ini"), "--device", "cpu",
                   *extra, cmd=(cmd or [cdt.CLI]) + ["batch"])

    def table(self):
        with open(os.path.join(self.out, "batch_summary.csv")) as fh:
            rows = list(csv.DictReader(fh))
        with open(os.path.join(self.out, "batch_summary.json")) as fh:
            return rows, json.load(fh)

    def statuses(self):
        return {r["id"]: r["status"] for r in self.table()[0]}

    def summary_mtimes(self):
        return {d: os.stat(os.path.join(self.out, d, "demons_summary.json")).st_mtime_ns
                for d in sorted(os.listdir(self.out))
                if os.path.exists(os.path.join(self.out, d, "demons_summary.json"))}

    def assert_no_partial_files(self):
        """Every pair folder holds a whole run (the summary and what it lists) or nothing, and
        no temporary (".name.XXXXXX") is left."""
        for d in os.listdir(self.out):
            folder = os.path.join(self.out, d)
            if not os.path.isdir(folder):
                continue
            names = sorted(os.listdir(folder))
            self.assertFalse([n for n in names if n.startswith(".")], names)
            if names:
                with open(os.path.join(folder, "demons_summary.json")) as fh:
                    listed = sorted(os.path.basename(p) for p in json.load(fh)["outputs"])
                self.assertEqual(names, listed)


class Batch(BatchBase):
    def test_batch_then_resume_skips_all(self):
        code, out, err = self.batch(self.three(), "--json")
        self.assertEqual(code, 0, err)
        rows, table = self.table()
        self.assertEqual([r["status"] for r in rows], ["done"] * 3)
        for r in rows:
            self.assertGreater(float(r["register_s"]), 0.0)
            self.assertEqual(int(r["iterations"]), 3)
            self.assertEqual(r["metric"], "energy")
            self.assertGreater(float(r["mean_dice"]), 0.5)
            self.assertEqual(r["error"], "")
        for k in range(3):
            self.assertEqual(sorted(os.listdir(os.path.join(self.out, f"p{k}"))),
                             ["demons_forward.nii.gz", "demons_labels.nii.gz",
                              "demons_summary.json", "demons_warped.nii.gz"])
        self.assertEqual(table["totals"]["done"], 3)
        self.assertGreater(table["totals"]["pairs_per_minute"], 0.0)
        lines = [json.loads(line) for line in out.splitlines()]
        self.assertEqual(sorted(line["id"] for line in lines if line.get("pair")),
                         ["p0", "p1", "p2"])
        self.assertTrue(lines[-1]["summary"])
        self.assertIn("[3/3]", err)
        before = self.summary_mtimes()
        code, out, err = self.batch(self.three())
        self.assertEqual(code, 0, err)
        self.assertEqual(set(self.statuses().values()), {"skipped-complete"})
        self.assertEqual(self.summary_mtimes(), before)
        # the figures of skipped pairs still come from their summaries
        self.assertEqual(int(self.table()[0][0]["iterations"]), 3)

    def test_changed_parameters_redo(self):
        lst = self.three()
        self.assertEqual(self.batch(lst)[0], 0)
        self.params(FAST.replace("iterations=3", "iterations=4"))
        code, _, err = self.batch(lst)
        self.assertEqual(code, 0, err)
        self.assertEqual(set(self.statuses().values()), {"done"})
        self.assertEqual({r["iterations"] for r in self.table()[0]}, {"4"})

    def test_output_deleted_redoes_that_pair(self):
        lst = self.three()
        self.assertEqual(self.batch(lst)[0], 0)
        os.remove(os.path.join(self.out, "p1", "demons_warped.nii.gz"))
        code, _, err = self.batch(lst)
        self.assertEqual(code, 0, err)
        self.assertEqual(self.statuses(), {"p0": "skipped-complete", "p1": "done",
                                           "p2": "skipped-complete"})

    def stop_after_first_pair(self, sig):
        """Start a slow batch of three, send sig when the first pair is complete; the
        process's exit status and the mtimes of the pairs finished by then."""
        self.params(SLOW)
        proc = subprocess.Popen([cdt.CLI, "batch", self.three(), "--out", self.out, "--params",
                                 self.path("p.ini"), "--device", "cpu"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                env=ENV)
        first = os.path.join(self.out, "p0", "demons_summary.json")
        deadline = time.monotonic() + 120
        try:
            while not os.path.exists(first) and time.monotonic() < deadline:
                time.sleep(0.02)
            self.assertTrue(os.path.exists(first), "the first pair did not finish in 120 s")
            done = self.summary_mtimes()
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        self.assertNotIn("p2", self.summary_mtimes(), "the batch ended before it was stopped")
        self.assert_no_partial_files()
        return proc.returncode, err, done

    def resume_keeps(self, done):
        code, _, err = self.batch(self.three())
        self.assertEqual(code, 0, err)
        status = self.statuses()
        for pair, mtime in done.items():
            self.assertEqual(status[pair], "skipped-complete")
            self.assertEqual(self.summary_mtimes()[pair], mtime)
        self.assertEqual(status["p2"], "done")

    def test_killed_batch_resumes(self):
        code, _, done = self.stop_after_first_pair(signal.SIGKILL)
        self.assertEqual(code, -signal.SIGKILL)
        self.assertIn("p0", done)
        self.resume_keeps(done)

    def test_ctrl_c_stops_cleanly_and_resumes(self):
        code, err, done = self.stop_after_first_pair(signal.SIGINT)
        self.assertEqual(code, 130, err)
        self.assertIn("stopping", err)
        status = self.statuses()
        self.assertEqual(status["p0"], "done")
        self.assertIn(status["p1"], ("cancelled", "done"))
        self.assertIn(status["p2"], ("not-run", "cancelled"))
        self.resume_keeps(done)

    def test_missing_file_fails_that_pair_only(self):
        lst = self.write_list([["a", "fixed.nii.gz", "m0.nii.gz", "", ""],
                               ["b", "fixed.nii.gz", "nothere.nii.gz", "", ""],
                               ["c", "fixed.nii.gz", "m2.nii.gz", "", ""]])
        code, _, err = self.batch(lst)
        self.assertEqual(code, 1, err)
        self.assertIn("nothere.nii.gz", err)
        rows = {r["id"]: r for r in self.table()[0]}
        self.assertEqual((rows["a"]["status"], rows["b"]["status"], rows["c"]["status"]),
                         ("done", "failed", "done"))
        self.assertIn("nothere.nii.gz", rows["b"]["error"])
        self.assertFalse(os.path.exists(os.path.join(self.out, "b")))

    def test_chain_affine_demons(self):
        lst = self.write_list([["x", "fixed.nii.gz", "m0.nii.gz", "fl.nii.gz", "ml0.nii.gz"]])
        code, _, err = self.batch(lst, "--method", "affine,demons")
        self.assertEqual(code, 0, err)
        names = sorted(os.listdir(os.path.join(self.out, "x")))
        for n in ("affine_affine.txt", "affine_affine.mat", "affine_fsl.mat",
                  "affine_warped.nii.gz", "affine_summary.json", "demons_warped.nii.gz",
                  "demons_forward.nii.gz", "demons_labels.nii.gz", "demons_summary.json"):
            self.assertIn(n, names)
        with open(os.path.join(self.out, "x", "demons_summary.json")) as fh:
            s = json.load(fh)
        self.assertEqual(s["initial_transform"], os.path.join(self.out, "x", "affine_affine.txt"))
        row = self.table()[0][0]
        self.assertEqual(row["status"], "done")
        self.assertGreater(int(row["iterations"]), 3)  # both stages' iterations
        code, _, err = self.batch(lst, "--method", "affine-demons")
        self.assertEqual((code, self.statuses()), (0, {"x": "skipped-complete"}), err)

    def test_jobs_two(self):
        code, _, err = self.batch(self.three(), "--jobs", "2")
        self.assertEqual(code, 0, err)
        self.assertEqual(set(self.statuses().values()), {"done"})
        self.assertEqual(self.table()[1]["jobs"], 2)
        self.assert_no_partial_files()

    def test_bad_lists_and_options(self):
        lst = self.write_list([["a", "fixed.nii.gz", "m0.nii.gz"], ["a", "fixed.nii.gz", "m1.nii.gz"]],
                              header="id,fixed,moving")
        code, _, err = self.batch(lst)
        self.assertEqual(code, 1)
        self.assertIn("line 3: id 'a' repeats line 2", err)
        lst = self.write_list([["fixed.nii.gz", "m0.nii.gz"]], header="fixed,movng")
        code, _, err = self.batch(lst)
        self.assertEqual(code, 1)
        self.assertIn("unknown column 'movng'", err)
        code, _, err = self.batch(self.three(), "--method", "demons,affine")
        self.assertEqual(code, 2)
        self.assertIn("only affine can start a later stage", err)
        code, _, err = self.batch(self.three(), "--method", "syn")
        self.assertEqual(code, 2)
        self.assertIn("unknown method 'syn'", err)
        self.assertFalse(os.path.exists(self.out))


class BatchMpi(BatchBase):
    """The batch under mpirun: rank r takes pairs i % R == r, rank 0 writes the table."""

    def setUp(self):
        if MPIRUN is None:
            self.skipTest("no mpirun given (a build without MPI)")
        super().setUp()

    def mpi(self, n, lst):
        return self.batch(lst, cmd=[MPIRUN, "-n", str(n), "--oversubscribe", cdt.CLI])

    def test_mpi_ranks(self):
        lst = self.three()
        for n in (2, 4):  # with 4 ranks one has no pair
            shutil.rmtree(self.out, ignore_errors=True)
            code, out, err = self.mpi(n, lst)
            self.assertEqual(code, 0, err)
            rows, table = self.table()
            self.assertEqual([r["status"] for r in rows], ["done"] * 3)
            self.assertEqual(table["ranks"], n)
            self.assertEqual(out.count("batch: 3 pairs"), 1)  # rank 0 alone reports
        code, _, err = self.mpi(2, lst)
        self.assertEqual(code, 0, err)
        self.assertEqual(set(self.statuses().values()), {"skipped-complete"})

    def test_mpi_failure_reaches_every_rank(self):
        lst = self.write_list([["a", "fixed.nii.gz", "m0.nii.gz"], ["b", "fixed.nii.gz", "no.nii.gz"]],
                              header="id,fixed,moving")
        code, _, err = self.mpi(2, lst)
        self.assertEqual(code, 1, err)
        rows = {r["id"]: r for r in self.table()[0]}
        self.assertEqual(rows["b"]["status"], "failed")
        self.assertIn("no.nii.gz", rows["b"]["error"])


if __name__ == "__main__":
    cdt.CLI = sys.argv[1]
    if len(sys.argv) > 2:
        MPIRUN = sys.argv[2]
        ENV.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")  # CI containers run as root
        ENV.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    # without mpirun the single-process tests; with it (a test of its own) the MPI ones
    unittest.main(argv=sys.argv[:1] + (["BatchMpi"] if MPIRUN else ["Batch"]))
