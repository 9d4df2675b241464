"""Atomic writes (rankboost._atomic): modes, umask, links, folder fsync, stale temp files, and
``kill -9`` of a writer in a loop (issue 15, class 9).

Every writer of the package goes through ``atomic_open``: ``RankBoostModel.save``,
``RankFusion.save``, ``dump_svmlight``, the TREC writers and the command line's outputs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import two_round_model
from rankboost import _atomic
from rankboost._atomic import atomic_open, atomic_write_text
from rankboost.datasets import dump_svmlight
from rankboost.model import RankBoostModel

posix = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes and signals")


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _tmp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.fixture
def umask():
    """Set a umask for the test and restore the previous one."""
    old = os.umask(0o022)
    os.umask(old)

    def set_(mask: int) -> None:
        os.umask(mask)

    yield set_
    os.umask(old)


# --------------------------------------------------------------------------- modes


@posix
def test_issue15_replacing_a_0600_file_keeps_0600(tmp_path):
    path = tmp_path / "model.json"
    path.write_text("old\n")
    os.chmod(path, 0o600)
    atomic_write_text(path, "new\n")
    assert path.read_text() == "new\n"
    assert _mode(path) == 0o600


@posix
@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_issue15_a_new_file_honours_the_umask(tmp_path, umask, mask, expected):
    umask(mask)
    path = tmp_path / "new.txt"
    atomic_write_text(path, "x\n")
    assert _mode(path) == expected


@posix
def test_a_link_is_written_through_and_stays_a_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old\n")
    os.chmod(real, 0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real.name)
    atomic_write_text(link, "new\n")
    assert link.is_symlink()
    assert real.read_text() == "new\n"
    assert _mode(real) == 0o640
    assert _tmp_files(tmp_path) == []


@posix
def test_issue15_the_folder_is_fsynced_after_the_rename(tmp_path, monkeypatch):
    synced: list[str] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    atomic_write_text(tmp_path / "a.txt", "x")
    assert synced == ["file", "dir"]  # the data first, then the folder that holds the rename


def test_an_error_inside_the_block_keeps_the_old_file(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old\n")

    def write_half() -> None:
        with atomic_open(path) as fh:
            fh.write(b"half")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        write_half()
    assert path.read_text() == "old\n"
    assert _tmp_files(tmp_path) == []


# --------------------------------------------------------------------------- stale temp files


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@posix
def test_issue15_temp_files_of_killed_writers_are_removed(tmp_path):
    host = _atomic._host_tag()
    dead = tmp_path / f".a.txt.{host}-{_dead_pid()}-0123abcd.tmp"
    alive = tmp_path / f".a.txt.{host}-{os.getppid()}-89abcdef.tmp"  # a live process
    other_host = tmp_path / f".a.txt.{'0' * 6 if host != '0' * 6 else '1' * 6}-1-00000000.tmp"
    other_target = tmp_path / f".b.txt.{host}-{_dead_pid()}-00000000.tmp"
    user_file = tmp_path / "notes.tmp"
    for p in (dead, alive, other_host, other_target, user_file):
        p.write_text("junk")
    atomic_write_text(tmp_path / "a.txt", "x")
    assert not dead.exists()  # ours, for this target, its writer is gone
    assert alive.exists()
    assert other_host.exists()
    assert other_target.exists()
    assert user_file.exists()  # not our naming pattern


# --------------------------------------------------------------------------- kill -9


def _big_models() -> tuple[RankBoostModel, RankBoostModel]:
    rng = np.random.default_rng(15)
    out = []
    for seed in (1, 2):
        n = 2000
        z = rng.uniform(0.5, 0.99, n)
        out.append(
            RankBoostModel.from_arrays(
                {
                    "feature": rng.integers(0, 20, n),
                    "kind": np.zeros(n, dtype=np.int8),
                    "threshold": rng.normal(size=n) * seed,
                    "default": rng.integers(0, 2, n).astype(float),
                    "alpha": rng.uniform(-1, 1, n),
                },
                {"r": z - 0.5, "z": z, "rloss": z / 2, "bound": np.cumprod(z)},
                n_features=20,
            )
        )
    return out[0], out[1]


def _kill_loop(target: Path, write_a, write_b, n_kills: int) -> int:
    """Fork a child that writes ``target`` with A and B alternately, forever; kill -9 it at a
    random moment, ``n_kills`` times. Return how many kills left a temp file (hit a write).

    The child's ``os.fsync`` sleeps 30 ms, as a slow disk would, so that many kills land
    between the creation of the temp file and the rename; the kill times spread over one
    write cycle (A then B) of the child, measured here whatever the machine's load."""
    start = time.perf_counter()
    write_a(target)
    expected = {target.read_bytes()}
    write_b(target)
    expected.add(target.read_bytes())
    cycle = time.perf_counter() - start + 4 * 0.03  # two writes, two fsyncs each
    assert len(expected) == 2
    rnd = random.Random(15)
    hits = 0
    for _ in range(n_kills):
        pid = os.fork()
        if pid == 0:  # the child: never returns

            def slow_fsync(fd: int, real_fsync=os.fsync) -> None:  # a slow disk
                time.sleep(0.03)
                real_fsync(fd)

            os.fsync = slow_fsync
            try:
                while True:
                    write_b(target)
                    write_a(target)
            finally:
                os._exit(1)
        time.sleep(rnd.uniform(0.0, cycle))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status)
        assert os.WTERMSIG(status) == signal.SIGKILL
        assert target.read_bytes() in expected  # the old file or the new one, never a partial
        hits += bool(_tmp_files(target.parent))
    write_a(target)  # the next write removes what the killed writers left
    assert _tmp_files(target.parent) == []
    assert target.read_bytes() in expected
    return hits


@posix
def test_issue15_kill_9_while_saving_a_model_leaves_old_or_new(tmp_path):
    a, b = _big_models()
    hits = _kill_loop(tmp_path / "model.json", a.save, b.save, n_kills=20)
    assert hits >= 1  # some kills landed in the middle of a write


@posix
def test_issue15_kill_9_while_writing_svmlight_leaves_old_or_new(tmp_path):
    rng = np.random.default_rng(0)
    X1, X2 = rng.random((1500, 12)), rng.random((1500, 12))
    y, qid = rng.integers(0, 3, 1500), np.repeat(np.arange(150), 10)
    hits = _kill_loop(
        tmp_path / "data.txt.gz",
        lambda p: dump_svmlight(p, X1, y, qid),
        lambda p: dump_svmlight(p, X2, y, qid),
        n_kills=20,
    )
    assert hits >= 1


# --------------------------------------------------------------------------- issue 26
def _device(folder: Path, name: str, minor: int) -> Path:
    """A character device node like /dev/null (minor 3) or /dev/full (7), in ``folder``."""
    path = folder / name
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except (OSError, AttributeError):
        pytest.skip("creating a device node needs root (the containers' case the issue hit)")
    return path


@posix
def test_issue26_a_device_is_written_in_place_and_stays_a_device(tmp_path):
    null = _device(tmp_path, "null", 3)
    atomic_write_text(null, "scores\n")
    assert stat.S_ISCHR(os.stat(null).st_mode)  # not replaced by a regular file
    link = tmp_path / "link"
    link.symlink_to(null)
    atomic_write_text(link, "scores\n")
    assert stat.S_ISCHR(os.stat(null).st_mode)
    assert link.is_symlink()
    assert _tmp_files(tmp_path) == []


@posix
def test_issue26_a_full_device_reports_no_space(tmp_path):
    full = _device(tmp_path, "full", 7)
    with pytest.raises(OSError, match=r"cannot write '.*full': No space left on device") as err:
        atomic_write_text(full, "x" * 100_000)
    assert err.value.errno == errno.ENOSPC
    assert stat.S_ISCHR(os.stat(full).st_mode)


@posix
def test_issue26_a_named_pipe_is_written_in_place(tmp_path):
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    atomic_write_text(fifo, "through the pipe\n")
    # checked first: a pipe replaced by a file would leave the reader waiting forever
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    reader.join(timeout=120)
    assert got == [b"through the pipe\n"]


def test_issue26_a_folder_is_refused_naming_it(tmp_path):
    with pytest.raises(IsADirectoryError, match="it is a directory"):
        atomic_write_text(tmp_path, "x")


@pytest.mark.parametrize("length", [228, 240, 255])
def test_issue26_names_up_to_name_max_can_be_written(tmp_path, length):
    name_max = os.pathconf(tmp_path, "PC_NAME_MAX") if hasattr(os, "pathconf") else 255
    if length > name_max:
        pytest.skip(f"this file system allows {name_max} bytes")
    path = tmp_path / ("m" * (length - 5) + ".json")
    atomic_write_text(path, "one\n")
    atomic_write_text(path, "two\n")  # and replaced, stale-file cleanup included
    assert path.read_text() == "two\n"
    assert _tmp_files(tmp_path) == []


def test_issue26_a_missing_folder_is_named_never_the_temporary_file(tmp_path):
    target = tmp_path / "no" / "such" / "out.json"
    with pytest.raises(FileNotFoundError) as err:
        atomic_write_text(target, "x")
    message = str(err.value)
    assert f"cannot write {str(target)!r}" in message
    assert "does not exist; create it first" in message
    assert str(target.parent) in message
    assert ".tmp" not in message


# ------------------------------------------------------- descriptors, the preflight check


@posix
def test_issue26_dev_stdout_into_a_pipe_writes_the_pipe(tmp_path):
    """``-o /dev/stdout | ...`` resolved to ``/proc/<pid>/fd/pipe:[N]`` and failed."""
    code = "from rankboost._atomic import atomic_write_text as w; w('/dev/stdout', 'a\\nb\\n')"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, check=False)
    assert (res.returncode, res.stdout, res.stderr) == (0, b"a\nb\n", b"")


@posix
def test_issue26_dev_stdout_appended_by_the_shell_is_appended_to(tmp_path):
    """``-o /dev/stdout >> log`` must not replace (or truncate) the log."""
    log = tmp_path / "log.txt"
    log.write_text("kept\n")
    code = "from rankboost._atomic import atomic_write_text as w; w('/dev/stdout', 'new\\n')"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    with open(log, "ab") as fh:
        res = subprocess.run([sys.executable, "-c", code], stdout=fh, env=env, check=False)
    assert res.returncode == 0
    assert log.read_text() == "kept\nnew\n"
    assert _tmp_files(tmp_path) == []


@posix
@pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="no /dev/fd")
def test_issue26_dev_fd_of_a_pipe_is_written(tmp_path):
    """Process substitution, ``-o >(gzip > x.gz)``, names ``/dev/fd/N``."""
    read_end, write_end = os.pipe()
    try:
        atomic_write_text(f"/dev/fd/{write_end}", "through the descriptor\n")
        os.close(write_end)
        with os.fdopen(read_end, "rb") as fh:
            assert fh.read() == b"through the descriptor\n"
    finally:
        for fd in (read_end, write_end):
            try:
                os.close(fd)
            except OSError:
                pass


def test_issue26_check_target_raises_what_the_writer_raises(tmp_path):
    """One source for the messages: the CLI's early check is the writer's own check."""
    cases = [tmp_path, tmp_path / "no such" / "dir" / "m.json", ""]
    for path in cases:
        with pytest.raises(OSError, match="cannot write") as early:
            _atomic.check_target(path)
        with pytest.raises(OSError, match="cannot write") as late:
            atomic_write_text(path, "x")
        assert (type(early.value), early.value.strerror) == (type(late.value), late.value.strerror)
    message = early.value.strerror
    assert message == "cannot write '': the path is empty; pass a file name"
    with pytest.raises(FileNotFoundError) as err:
        _atomic.check_target(tmp_path / "no such" / "dir" / "m.json")
    assert f"(mkdir -p '{tmp_path / 'no such' / 'dir'}')" in str(err.value)  # quoted for a shell
    _atomic.check_target(tmp_path / "new.json")  # fine: nothing raised, nothing created
    assert list(tmp_path.iterdir()) == []


@posix
def test_issue26_a_link_into_a_missing_folder_names_that_folder(tmp_path):
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "gone" / "out.json")
    with pytest.raises(FileNotFoundError) as err:
        atomic_write_text(link, "x")
    assert f"the folder {str(tmp_path / 'gone')!r} does not exist" in str(err.value)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A LETOR file, a model for it (no training: from arrays), two runs, qrels, a click log."""
    tmp = tmp_path_factory.mktemp("writers")
    rng = np.random.default_rng(26)
    X = rng.random((40, 3))
    dump_svmlight(tmp / "d.txt", X, (X[:, 0] > 0.5).astype(float), np.repeat(np.arange(4), 10))
    two_round_model().save(tmp / "m.json")
    for name in ("a", "b"):
        (tmp / f"{name}.run").write_text("1 Q0 d1 1 2.0 x\n1 Q0 d2 2 1.0 x\n")
    (tmp / "qrels.txt").write_text("1 0 d1 1\n1 0 d2 0\n")
    (tmp / "clicks.tsv").write_text(
        "qid\tdocid\tposition\tclick\tsession\tcount\n1\td1\t1\t1\t0\t1\n1\td2\t2\t0\t0\t1\n"
    )
    return tmp


#: every command that writes a file given by -o, with its inputs
WRITERS = {
    "train": ["train", "{t}/d.txt", "--rounds", "1", "-q"],
    "predict": ["predict", "{t}/m.json", "{t}/d.txt"],
    "export": ["export", "{t}/m.json", "--format", "xgboost"],
    "convert": ["convert", "--to", "letor", "{t}/a.run", "{t}/b.run", "--qrels", "{t}/qrels.txt"],
    "clicks propensity": ["clicks", "propensity", "{t}/clicks.tsv"],
    "clicks simulate": ["clicks", "simulate", "{t}/d.txt"],
    # the output is checked before anything is read or trained: no fusion model needed
    "fuse train": ["fuse", "train", "--runs", "{t}/a.run", "{t}/b.run", "--qrels", "{t}/qrels.txt"],
    "fuse apply": ["fuse", "apply", "{t}/m.json", "--runs", "{t}/a.run", "{t}/b.run"],
    "fuse export": ["fuse", "export", "{t}/m.json", "--engine", "opensearch"],
}


@pytest.mark.parametrize(
    ("command", "fault"),
    [
        (command, fault)
        for command in sorted(WRITERS)
        for fault in ("missing folder", "folder", "empty")
        if (command, fault) != ("clicks propensity", "empty")  # -o '' prints to stdout there
    ],
)
def test_issue26_every_writer_names_the_users_path(inputs, capsys, command, fault):
    """One message per fault for every command (export said 'pass a file in an existing
    folder' without naming the folder to create; train and predict another wording)."""
    from rankboost.cli import main

    out = {
        "missing folder": str(inputs / "no such" / "dir" / "out.json"),
        "folder": str(inputs),
        "empty": "",
    }[fault]
    argv = [a.format(t=inputs) for a in WRITERS[command]]
    before = sorted(p.name for p in inputs.iterdir())
    assert main([*argv, "-o", out]) == 1
    err = "".join(  # clicks propensity warns about its tiny log first
        line for line in capsys.readouterr().err.splitlines(True) if "warning" not in line
    )
    assert err.count("\n") == 1, err
    assert err.startswith(f"rankboost: error: cannot write {out!r}: "), err
    assert {
        "missing folder": f"the folder {str(inputs / 'no such' / 'dir')!r} does not exist; "
        f"create it first (mkdir -p '{inputs / 'no such' / 'dir'}')",
        "folder": "it is a directory; pass a file name",
        "empty": "the path is empty; pass a file name",
    }[fault] in err
    assert ".tmp" not in err
    assert sorted(p.name for p in inputs.iterdir()) == before


@contextlib.contextmanager
def _read_only_folder(folder: Path):
    """``folder`` made unwritable: mode 0o555, or (root ignores modes) ``chattr +i``."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    chattr = shutil.which("chattr")
    made = (
        chattr is not None
        and not subprocess.run([chattr, "+i", folder], check=False, capture_output=True).returncode
    )
    if not made:
        pytest.skip("root ignores file modes and this file system has no immutable flag")
    try:
        yield
    finally:
        subprocess.run([str(chattr), "-i", folder], check=True)


@posix
def test_issue26_a_read_only_folder_names_the_users_path(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "old.json").write_text("old\n")
    with _read_only_folder(folder):
        for name in ("new.json", "old.json"):
            with pytest.raises(PermissionError) as err:
                atomic_write_text(folder / name, "new\n")
            message = err.value.strerror
            assert message.startswith(f"cannot write {str(folder / name)!r}: "), message
            assert str(folder) in message
            assert ".tmp" not in message
        assert sorted(p.name for p in folder.iterdir()) == ["old.json"]
        assert (folder / "old.json").read_text() == "old\n"


def test_no_module_writes_a_file_but_through_atomic_open():
    """ "Every writer of the package goes through ``atomic_open``", read off the source: no
    ``open`` for writing, ``Path.write_text``/``write_bytes`` or ``savefig`` to a path outside
    ``rankboost._atomic`` (``savefig`` into an ``atomic_open`` file object is fine: its first
    argument is then the object, a plain name, not a path expression)."""
    import ast

    src = Path(_atomic.__file__).parent
    found = []
    for path in sorted(src.rglob("*.py")):
        if path.name == "_atomic.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            where = f"{path.relative_to(src)}:{node.lineno}"
            if name in ("write_text", "write_bytes") and isinstance(fn, ast.Attribute):
                found.append(where)
            elif name == "open" and len(node.args) >= 2:
                mode = node.args[1]
                if isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+"):
                    found.append(where)
            elif name == "savefig" and node.args:
                # to a name bound by ``with atomic_open(...) as name``, nothing else
                first = node.args[0]
                if not (isinstance(first, ast.Name) and _bound_by_atomic_open(path, first.id)):
                    found.append(where)
    assert found == []


def _bound_by_atomic_open(path: Path, name: str) -> bool:
    import ast

    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                target = item.optional_vars
                if (
                    isinstance(call, ast.Call)
                    and getattr(call.func, "id", getattr(call.func, "attr", "")) == "atomic_open"
                    and isinstance(target, ast.Name)
                    and target.id == name
                ):
                    return True
    return False
