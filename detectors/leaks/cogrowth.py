"""Co-growth: caches that grow together in fixed ratios are one leak, caused by one user action.

One leaked UDP socket allocates a ``sock_inode_cache`` object, a ``UDP`` sock,
a ``dentry``, a ``filp`` and a few kmalloc objects; a thousand leaked sockets
grow all of them, in the same ratios, at the same moments.  Such a group
becomes one finding naming the likely action (:data:`SIGNATURES`, ordered:
specific first) instead of five findings about five caches.

Two caches co-grow when their object counts, over the flagged cache's judged
stretch, correlate (Pearson >= 0.95 on window medians), the ratio of their
growths is the same in the first and the second half (within a factor 1.5),
and either one known action grows both (a signature names both caches) or
their increments correlate (they grow at the same moments).  Two steady ramps
alone are not tied: any two independent leaks look like that.  A cache growing
with the page cache (detectors/leaks/pagecache.py) is nobody's partner.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable, Mapping

import numpy as np

from detectors.leaks.attribution import merged_names
from detectors.leaks.decision import WITH_PAGE_CACHE
from detectors.leaks.series import FloatArray, SeriesMatrix, resample
from forensics.types.leaks import (
    FD_VIEW_CACHES,
    CoGrowth,
    Grade,
    LeakThresholds,
    SeriesVerdict,
    Share,
    Signature,
    window_for,
)

MIN_CORRELATION = 0.95
MAX_RATIO_DRIFT = 1.5  # first-half ratio / second-half ratio, either way
MIN_RATIO = 0.05  # objects per object of the flagged cache: less is background
MIN_STEP_CORRELATION = 0.6  # Pearson of the window-to-window increments of two irregular series
STEADY = 0.3  # increments varying less than this share of their mean carry no timing to compare


_SOCKET_STEPS = (
    "cat /proc/net/sockstat /proc/net/sockstat6",
    "ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c socket; find the process: ls -l /proc/PID/fd | grep socket | wc -l",
)

#: What one socket makes besides its sock (sock_alloc, sock_alloc_file): an inode, a pseudo-file's dentry, the
#: file, and the file's LSM blob where an LSM keeps one (lsm_file_cache, Linux >= 6.9), per anchor object (a UDP,
#: TCP or UNIX sock; for "sockets" the sock_inode_cache object).
_PER_SOCKET = (("sock_inode_cache", 1.0), ("dentry", 1.0), ("filp", 1.0), ("lsm_file_cache", 1.0))

#: Caches a socket's action typically grows besides its sock and inode.
_SOCKET_COMPANIONS = ("dentry", "filp", "lsm_file_cache", "kmalloc-*", "kmalloc-cg-*", "skbuff_*", "cred_jar")

#: Ordered: the first signature whose required caches are all in the group names it.
SIGNATURES: tuple[Signature, ...] = (
    Signature(
        "UDP sockets",
        "a process opens UDP sockets and never closes them (one sock_inode_cache, UDP, dentry and filp each)",
        (("UDP*",), ("sock_inode_cache",)),
        _SOCKET_STEPS,
        _SOCKET_COMPANIONS,
        _PER_SOCKET,
        held_by_process=True,
        fds_per_object=1.0,
    ),
    Signature(
        "TCP sockets",
        "a process opens TCP sockets (or accepts connections) and never closes them",
        (("TCP*",), ("sock_inode_cache",)),
        (*_SOCKET_STEPS, "ss -tanp | awk '{print $1}' | sort | uniq -c (states: CLOSE_WAIT means the peer closed)"),
        (*_SOCKET_COMPANIONS, "request_sock_TCP*", "tw_sock_TCP*"),
        _PER_SOCKET,
        held_by_process=True,
        fds_per_object=1.0,
    ),
    Signature(
        "UNIX sockets",
        "a process creates UNIX sockets (socket(), socketpair(), accept()) and never closes them",
        (("UNIX*",), ("sock_inode_cache",)),
        (*_SOCKET_STEPS, "ss -xanp | awk '{print $NF}' | sort | uniq -c | sort -n | tail"),
        _SOCKET_COMPANIONS,
        _PER_SOCKET,
        held_by_process=True,
        fds_per_object=1.0,
    ),
    Signature(
        "sockets",
        "a process creates sockets and never closes them",
        (("sock_inode_cache",),),
        _SOCKET_STEPS,
        (
            *_SOCKET_COMPANIONS,
            "UDP*",
            "TCP*",
            "UNIX*",
            "RAW*",
            "PING*",
            "NETLINK",
        ),
        _PER_SOCKET,
        held_by_process=True,
        fds_per_object=1.0,
    ),
    Signature(
        "processes and threads",
        "processes or threads are created and never reaped (zombies, or leaked task references)",
        (("task_struct", "signal_cache", "pid"),),
        (
            "ps -eo stat,ppid,comm | awk '$1 ~ /Z/' | sort | uniq -c (zombies and their parents)",
            "ls /proc | grep -c '^[0-9]'; cat /proc/loadavg",
        ),
        (
            "task_struct",
            "pid",
            "cred_jar",
            "signal_cache",
            "sighand_cache",
            "files_cache",
            "fs_cache",
            "mm_struct",
            "vm_area_struct",
            "anon_vma*",
            "maple_node",
            "kmalloc-*",
            "kmalloc-cg-*",
            "pid_namespace",
            "nsproxy",
            "seccomp_filter",
        ),
    ),
    Signature(
        "pipes",
        "a process creates pipes and never closes them (two open files and one pipefs inode each)",
        (("filp",), ("inode_cache",)),
        ("ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c pipe:", "lsof -n | awk '$5 == \"FIFO\"' | wc -l"),
        ("dentry", "lsm_file_cache", "kmalloc-*", "kmalloc-cg-*"),
        # Per open file (the anchor, filp): a pipe is two files sharing one inode and one dentry.
        (("inode_cache", 0.5), ("dentry", 0.5), ("lsm_file_cache", 1.0)),
        held_by_process=True,
        fds_per_object=1.0,
    ),
    Signature(
        "shared memory mappings",
        "a process maps shared memory (mmap MAP_SHARED|MAP_ANONYMOUS, memfd, /dev/shm) and never unmaps it "
        "(one vm_area_struct, shmem inode and file each)",
        (("vm_area_struct",), ("shmem_inode_cache",)),
        (
            "wc -l /proc/[0-9]*/maps | sort -n | tail (VMAs per process)",
            "grep -c -e '/dev/zero' -e 'memfd:' -e '/SYSV' /proc/PID/maps (shared anonymous mappings)",
        ),
        ("filp", "lsm_file_cache", "dentry", "kmalloc-*", "kmalloc-cg-*"),
        # Per mapping: shmem_zero_setup makes a shmem inode and a pseudo-file (and its LSM blob), pinned by the VMA.
        (("shmem_inode_cache", 1.0), ("filp", 1.0), ("lsm_file_cache", 1.0)),
        held_by_process=True,
    ),
    Signature(
        "memory mappings",
        "a process maps memory (mmap/mprotect) and never unmaps it",
        (("vm_area_struct",),),
        ("wc -l /proc/[0-9]*/maps | sort -n | tail (VMAs per process)",),
        ("maple_node", "anon_vma*", "vm_area_struct"),
        held_by_process=True,
    ),
    Signature(
        "tmpfs files",
        "files are created in tmpfs, /dev/shm or memfds and never removed",
        (("shmem_inode_cache",), ("dentry",)),
        ("df -h /dev/shm /tmp /run",),
        ("radix_tree_node", "xarray_node", "kmalloc-*", "inode_cache", "filp"),
    ),
    Signature(
        "epoll watches",
        "file descriptors are added to epoll sets and never removed",
        (("eventpoll_epi",),),
        ("grep -c tfd /proc/[0-9]*/fdinfo/* | sort -t: -k2 -n | tail",),
        ("eventpoll_*", "filp", "kmalloc-*"),
        held_by_process=True,
    ),
    Signature(
        "inotify watches",
        "inotify watches are added and never removed",
        (("inotify_inode_mark",),),
        ("grep -c inotify /proc/[0-9]*/fdinfo/* | sort -t: -k2 -n | tail",),
        ("fsnotify_mark_connector", "kmalloc-*"),
        held_by_process=True,
    ),
    Signature(
        "cgroups",
        "cgroups (or sysfs nodes) are created and never removed",
        (("kernfs_node_cache",),),
        ("find /sys/fs/cgroup -type d | wc -l", "cat /proc/cgroups"),
        ("kmalloc-*", "kmalloc-cg-*", "dentry", "inode_cache", "radix_tree_node"),
    ),
    Signature(
        "open files",
        "a process opens files and never closes them",
        (("filp",),),
        ("cat /proc/sys/fs/file-nr", "ls /proc/[0-9]*/fd 2>/dev/null | wc -l"),
        ("dentry", "lsm_file_cache", "kmalloc-*", "kmalloc-cg-*"),
        (("lsm_file_cache", 1.0),),  # a file's LSM blob; its dentry may be shared by many opens
        held_by_process=True,
        fds_per_object=1.0,
    ),
)


def match_signature(names: tuple[str, ...]) -> Signature | None:
    """The first signature all of whose required groups match one of ``names``."""
    for sig in SIGNATURES:
        if all(any(fnmatch.fnmatchcase(n, p) for n in names for p in group) for group in sig.required):
            return sig
    return None


def _ratio(x: FloatArray, y: FloatArray) -> float:
    """Least-squares slope of y on x (objects of y per object of x)."""
    xc = x - x.mean()
    sxx = float(xc @ xc)
    return float(xc @ (y - y.mean())) / sxx if sxx > 0 else math.nan


def _steady_ratio(x: FloatArray, y: FloatArray) -> float | None:
    """The ratio of y's growth to x's when it is the same in both halves, else None."""
    half = len(x) // 2
    if half < 3:
        return None
    whole = _ratio(x, y)
    first, second = _ratio(x[:half], y[:half]), _ratio(x[half:], y[half:])
    if not (whole > 0 and first > 0 and second > 0):
        return None
    if max(first / second, second / first) > MAX_RATIO_DRIFT:
        return None
    return whole


def related(a: str, b: str) -> bool:
    """Whether one known action typically grows both caches."""
    return any(sig.involves(a) and sig.involves(b) for sig in SIGNATURES)


def moves_together(x: FloatArray, y: FloatArray) -> bool:
    """Whether two series move at the same moments: their increments correlate.

    Two steady ramps carry no timing (any two leaks look alike), so they do not count as moving together.
    """
    dx, dy = np.diff(x), np.diff(y)
    if len(dx) < 5:
        return False
    for d in (dx, dy):
        if float(d.std()) <= STEADY * abs(float(d.mean())) or float(d.std()) == 0.0:
            return False
    return float(np.corrcoef(dx, dy)[0, 1]) >= MIN_STEP_CORRELATION


def in_use(matrix: SeriesMatrix) -> FloatArray:
    """The window medians of each cache's objects in use (active_objs), else of its objects.

    Objects, not objects in use, tied a leak's caches only on a quiet machine: a cache others allocate from and
    free to (filp, kmalloc-64, lsm_file_cache) keeps free objects in its slabs, and a leak fills those before new
    slabs come, so its num_objs stood still for 30 s, then jumped (three real UDP-socket leaks, 2026-12-06, busy
    machine: filp's first-half ratio 0.58-0.74 per socket, its second 0.53-1.11, never tied) while its objects in
    use grew one per socket throughout (0.80-1.14 in either half).
    """
    return matrix.grid_extra.get("active_objs", matrix.grid_extra["objects"])


#: The objects in use of every column over one episode (a flagged cache's judged stretch): window medians.
Episode = Callable[[float], FloatArray]


def episodes(matrix: SeriesMatrix, min_points: int = LeakThresholds.min_points) -> Episode:
    """The window medians of every column's objects in use from a judged stretch's start on, one episode at a time.

    Where the stretch holds ``min_points`` of the matrix's windows, those; else (a rise late in a long store) its
    own samples in windows fit for its span, as the rise itself was judged (detectors/leaks/judge.py _rise_grid).
    Over the store's windows a 2.5-min mapping leak at the end of a 23-min store with an earlier socket episode
    (/tmp/ue9 v1.sqlite) had 3 windows of 58 s: too few to tie anything, so its shmem inodes and files were not
    counted in its rate.
    """
    made: dict[float, FloatArray] = {}

    def of(since_wall: float) -> FloatArray:
        if since_wall in made:
            return made[since_wall]
        rows = matrix.grid_walls >= since_wall
        if int(rows.sum()) >= min_points:
            out = in_use(matrix)[rows]
        else:
            raw = matrix.extra.get("active_objs", matrix.extra["objects"])
            taken = matrix.walls >= since_wall
            walls = matrix.walls[taken]
            if len(walls) < 2:
                out = in_use(matrix)[rows]
            else:
                span = float(walls[-1] - walls[0])
                out = resample(walls, raw[taken], window_for(span, matrix.interval_seconds))[1]
        made[since_wall] = out
        return out

    return of


def _partners(
    matrix: SeriesMatrix, flagged: SeriesVerdict, known_as: Callable[[str], tuple[str, ...]], episode: Episode
) -> dict[int, float]:
    """Columns whose objects in use grow with the flagged cache's: column -> objects per flagged object."""
    block = episode(flagged.since_wall)
    own = matrix.column(flagged.name)
    x = block[:, own]
    if len(x) < 6 or float(np.ptp(x)) == 0.0:
        return {}
    complete = ~np.isnan(block).any(axis=0) & (np.ptp(np.nan_to_num(block), axis=0) > 0)
    complete[own] = False
    columns = np.flatnonzero(complete)
    if len(columns) == 0:
        return {}
    xs = (x - x.mean()) / x.std()
    ys = block[:, columns]
    ys = (ys - ys.mean(axis=0)) / ys.std(axis=0)
    correlation = (xs @ ys) / len(x)
    found = {}
    for column, r in zip(columns.tolist(), correlation.tolist(), strict=True):
        if r < MIN_CORRELATION:
            continue
        ratio = _steady_ratio(x, block[:, column])
        if ratio is None or ratio < MIN_RATIO:
            continue
        # Trends alone do not tie two caches: a known action must grow both, or they move in step.
        pairs = ((a, b) for a in known_as(flagged.name) for b in known_as(matrix.names[column]))
        if any(related(a, b) for a, b in pairs) or moves_together(x, block[:, column]):
            found[int(column)] = ratio
    return found


def find_groups(
    matrix: SeriesMatrix,
    verdicts: list[SeriesVerdict],
    judge: Callable[[int], SeriesVerdict | None],
    aliases: Mapping[str, str] | None = None,
    min_points: int = LeakThresholds.min_points,
) -> list[CoGrowth]:
    """Group the flagged caches of one matrix with the caches that grow with them.

    ``judge`` grades a column that was not judged yet (a small partner such as
    kmalloc-64, below the effect size on its own).  ``aliases`` (merged name ->
    /sys/kernel/slab directory) lets a signature see the caches SLUB merged
    into a shown one: UNIX sockets growing ``signal_cache``.  Caches are tied
    over each flagged cache's judged stretch (its episode, :func:`episodes`),
    not over the whole store.
    """
    merged = aliases or {}
    episode = episodes(matrix, min_points)

    def known_as(name: str) -> tuple[str, ...]:
        return (name, *merged_names(name, merged))

    if "objects" not in matrix.grid_extra:
        return []
    by_name = {v.name: v for v in verdicts}
    flagged = sorted((v for v in verdicts if v.grade in (Grade.LEAK, Grade.SUSPECT)), key=lambda v: (-v.rate, v.name))
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    for v in flagged:
        root(v.name)
        for column in _partners(matrix, v, known_as, episode):
            name = matrix.names[column]
            if name not in by_name:
                judged = judge(column)
                if judged is None:
                    continue
                by_name[name] = judged
            if by_name[name].verdict.rule == WITH_PAGE_CACHE:
                continue  # its growth is the page cache's metadata: a leak's steady ramp correlates with any ramp
            if by_name[name].growth <= 0:
                # Its objects in use rose inside slabs it already had (kmalloc-128 beside a UNIX-socket leak): no
                # memory grew, so it neither leaks "together" nor explains SUnreclaim.
                continue
            parent[root(name)] = root(v.name)
    components: dict[str, list[str]] = {}
    for name in parent:
        components.setdefault(root(name), []).append(name)
    groups = []
    for names in components.values():
        if len(names) < 2:
            continue
        members = [by_name[n] for n in names]
        signature = match_signature(tuple(a for n in names for a in known_as(n)))
        anchor = _anchor(members, signature, known_as)
        ordered = [anchor, *sorted((m for m in members if m is not anchor), key=lambda m: (-m.rate, m.name))]
        ratios = _ratios(matrix, ordered, episode)
        view = _fd_view(ordered, ratios, signature)
        shares = tuple(_share(matrix, ordered, i, r, signature, episode, view) for i, r in enumerate(ratios))
        groups.append(CoGrowth(tuple(ordered), ratios, signature, shares))
    return sorted(groups, key=lambda g: (-g.grade.rank, -g.rate))


def _anchor(
    members: list[SeriesVerdict], signature: Signature | None, known_as: Callable[[str], tuple[str, ...]]
) -> SeriesVerdict:
    """The member the others are counted against: the signature's first cache, else the fastest flagged one."""
    if signature is not None:
        for pattern in signature.required[0]:
            for m in members:
                if any(fnmatch.fnmatchcase(name, pattern) for name in known_as(m.name)):
                    return m
    return max(members, key=lambda m: (m.grade.rank, m.rate))


#: A member growing up to this factor faster than its known count per anchor object, or whose in-step part is
#: within it of its ratio, grows all for the group (the ratios of three real UDP leaks: 0.94-1.05 per socket).
SHARE_TOLERANCE = 1.2


#: What procfs inodes and dentries growing one per leaked fd are consistent with.  The store holds slab counts
#: only: the ratio is all that ties them to the fds, and two causes give it.
FD_VIEW_WHY = (
    "the ratio is the only evidence: it is consistent with a listing of /proc/PID/fd (ls, lsof, a monitoring agent: "
    "one procfs inode and dentry per fd listed, kept while the fd is open), or with leaked fds that are themselves "
    "open procfs files; the slab counts cannot tell which"
)


def _fd_view(ordered: list[SeriesVerdict], ratios: tuple[float, ...], signature: Signature | None) -> float | None:
    """The procfs inodes per anchor object when they grow as the group's fds do (one inode and one dentry per fd: a
    listing of /proc/PID/fd, or fds of open procfs files), else None: then no dentry is attributed to such a view."""
    fds = signature.fds_per_object if signature is not None else None
    if fds is None:
        return None
    for member, ratio in zip(ordered, ratios, strict=True):
        if member.name in FD_VIEW_CACHES and fds / SHARE_TOLERANCE <= ratio <= fds * SHARE_TOLERANCE:
            return ratio
    return None


def _share(
    matrix: SeriesMatrix,
    ordered: list[SeriesVerdict],
    index: int,
    ratio: float,
    signature: Signature | None,
    episode: Episode,
    view: float | None = None,
) -> Share:
    """How much of member ``index``'s growth is the group's: what a known count, or the timing, supports.

    A cache others allocate from too (dentry: procfs and ext4 lookups) can grow in a steady ratio to the anchor and
    still mostly for other reasons (a real UDP-socket leak: 2.0 dentries per socket over 2 min, one the socket's).
    The action's known count per anchor object bounds the group's part; without one, the part whose increments
    follow the anchor's (a least-squares slope of increments on increments); a steady anchor carries no timing,
    and then the share is unknown.
    """
    anchor, member = ordered[0], ordered[index]
    if index == 0:
        return Share(1.0, "anchor", f"the group is counted in {anchor.name} objects")
    per = f"per {anchor.name} object"
    made = signature.made_per_object(member.name) if signature is not None else None
    # who makes them: "as many as {source}: N each", "of which {source} N"
    source = "the action makes"
    if member.name in FD_VIEW_CACHES and signature is not None and signature.fds_per_object is not None:
        made, source = signature.fds_per_object, f"the group's fds, one procfs inode each ({FD_VIEW_WHY})"
    elif member.name == "dentry" and view is not None:
        # each procfs inode of the group's fds has its dentry, whichever made them
        action = f"the action makes ({_num(made)}) and " if made is not None else ""
        made = (made or 0.0) + view
        source = f"{action}the procfs inodes of the group's fds ({_num(view)}, a dentry each; {FD_VIEW_WHY})"
    if made is not None and not math.isnan(ratio):
        if ratio <= made * SHARE_TOLERANCE:
            return Share(1.0, "count", f"{_num(ratio)} {per}, as many as {source}: {_num(made)} each")
        return Share(
            made / ratio,
            "count",
            f"{_num(ratio)} {per}, of which {source} {_num(made)}: {made / ratio:.0%} of its growth is the "
            f"group's; the other {_num(ratio - made)} {per} grow for other reasons, not attributed",
        )
    objects = episode(anchor.since_wall)
    dx = np.diff(objects[:, matrix.column(anchor.name)])
    dy = np.diff(objects[:, matrix.column(member.name)])
    keep = ~(np.isnan(dx) | np.isnan(dy))
    dx, dy = dx[keep], dy[keep]
    steady = len(dx) < 5 or float(dx.std()) <= STEADY * abs(float(dx.mean()))
    if steady or math.isnan(ratio) or ratio <= 0:
        return Share(
            None,
            "unknown",
            f"{_num(ratio)} {per}, but {anchor.name} grows steadily and the action makes no known number of "
            f"{member.name} objects each: the samples cannot tell its growth for the group from other users', so it "
            "is not counted in the group's rate",
        )
    step = _ratio(dx, dy)
    fraction = min(max(step / ratio, 0.0), 1.0)
    if fraction * SHARE_TOLERANCE >= 1.0:
        return Share(1.0, "in step", f"{_num(ratio)} {per}, growing at the moments {anchor.name} grows")
    return Share(
        fraction,
        "in step",
        f"{_num(ratio)} {per}, of which {_num(max(step, 0.0))} grow at the moments {anchor.name} grows: "
        f"{fraction:.0%} of its growth is the group's, the rest not attributed",
    )


def _num(value: float) -> str:
    """Objects per object: two significant digits ("1", "2.6", "0.5")."""
    return "?" if math.isnan(value) else f"{value:.2g}"


def _ratios(matrix: SeriesMatrix, ordered: list[SeriesVerdict], episode: Episode) -> tuple[float, ...]:
    """Objects of each member per anchor object over the anchor's episode."""
    objects = episode(ordered[0].since_wall)
    x = objects[:, matrix.column(ordered[0].name)]
    out = [1.0]
    for m in ordered[1:]:
        y = objects[:, matrix.column(m.name)]
        keep = ~(np.isnan(x) | np.isnan(y))
        out.append(_ratio(x[keep], y[keep]) if int(keep.sum()) >= 3 else math.nan)
    return tuple(out)
