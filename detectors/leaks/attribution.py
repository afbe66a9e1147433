"""Who allocates a slab cache, and how to confirm it: an ordered table of cache name patterns.

The table answers the second half of "is the kernel leaking, and what?": a
growing ``vm_area_struct`` means some process maps memory and never unmaps it;
a growing ``filp`` means open files.  Rules are tried in order, specific
names first and the catch-all last (a test checks that no rule is shadowed).

SLUB merges caches of the same size and flags into one, shown under one name
(``/sys/kernel/slab/<name>`` symlinks): a growing ``signal_cache`` may really be
``UNIX`` sockets.  :func:`describe_aliases` names the other caches a shown
cache also holds.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import NamedTuple


class Lifetime(NamedTuple):
    """Objects the kernel frees on a timer: their count levels off at (creation rate x seconds)."""

    seconds: float
    why: str  # the timer, as the kernel source names it


class Attribution(NamedTuple):
    """What typically allocates the objects of a cache, and how to confirm it."""

    pattern: str  # fnmatch pattern of cache names
    subject: str  # short name of the user-visible thing ("memory mappings")
    allocated_by: str  # the user action / kernel path that allocates these objects
    reclaimable: bool  # the kernel frees these under memory pressure (shrinkers, page cache)
    confirm: tuple[str, ...]  # what to read or run to confirm, specific to this cache
    lifetime: Lifetime | None = None  # freed on a timer: growth within the first lifetime is the fill
    # What holds the objects so that no shrinker can free them until their owner lets go ("" when nothing
    # does): a reclaimable cache frees only its unused objects; one that is not is freed only by the owner.
    pinned_by: str = ""
    # Whether the kernel counts its slabs in SReclaimable (SLAB_RECLAIM_ACCOUNT), where that is not ``reclaimable``
    # (None: the same): the guess :func:`in_sreclaimable` makes when a store did not record the cache's flag.
    reclaim_account: bool | None = None
    # Whether file I/O can grow the cache beside the page cache (its pages' metadata, or a generic class that holds
    # it), so that growth in step with a growing page cache is too soon to call (decision.WITH_PAGE_CACHE).  False
    # for objects only their owners' actions make and free (mappings, processes, sockets): reclaim frees none of
    # them with the pages, and under load a leaking process and the machine's file writers run at the same moments.
    with_file_io: bool = True
    # Whether its objects live as long as the processes (or their mappings) that made them: starting and exiting
    # processes (a build, a test suite) grow and free them by thousands in seconds, so growth alone over a short
    # stretch is churn, not a leak, unless it is a steady ramp (decision rule short-process-rise).
    with_processes: bool = False
    # Whether its objects are held open by a process (sockets, open files, mappings, epoll and inotify watches): a
    # process keeping them grows it, and its exit frees them; the report's verdict then says a process holds kernel
    # memory, not that the kernel had a problem (SubjectKind.HELD_BY_PROCESS).  Not the process structures
    # themselves (a leaked task reference is the kernel's), nor tmpfs files (they outlive their creator).
    held_by_process: bool = False

    @property
    def known(self) -> bool:
        """Whether the rule knows the cache (not the catch-all, whose reclaim and accounting are a guess)."""
        return self.pattern != "*"


_PROCESSES_CONFIRM = (
    "count tasks and zombies: ps -eLo stat,comm | sort | uniq -c | sort -n | tail",
    "cat /proc/loadavg (4th field: runnable/total tasks)",
)
_SOCKETS_CONFIRM = (
    "cat /proc/net/sockstat /proc/net/sockstat6",
    "ss -s; ss -tuxanp | awk '{print $NF}' | sort | uniq -c | sort -n | tail (sockets per process)",
)
_FILES_CONFIRM = (
    "cat /proc/sys/fs/file-nr (open files)",
    'for p in /proc/[0-9]*; do echo "$(ls $p/fd 2>/dev/null | wc -l) $p"; done | sort -n | tail',
)

_INODES = "open files pin their inodes; only unused ones are freed under pressure"

#: Ordered rules: the first pattern that matches a cache name wins.
ATTRIBUTIONS: tuple[Attribution, ...] = (
    Attribution(
        "vm_area_struct",
        "memory mappings",
        "mmap()/mprotect() of regions never munmap()ed (one object per VMA)",
        False,
        (
            "count VMAs per process: wc -l /proc/[0-9]*/maps | sort -n | tail",
            "cat /proc/PID/maps of the top process (alternating permissions keep VMAs from merging)",
        ),
        with_file_io=False,
        with_processes=True,
        held_by_process=True,
    ),
    Attribution(
        "maple_node",
        "memory mappings",
        "the maple tree of VMAs (mmap) and other maple trees",
        False,
        ("wc -l /proc/[0-9]*/maps | sort -n | tail",),
        with_file_io=False,
        with_processes=True,
    ),
    Attribution(
        "anon_vma*",
        "anonymous memory mappings",
        "anonymous mappings that were written to, and fork() sharing them",
        False,
        ("wc -l /proc/[0-9]*/maps | sort -n | tail", *_PROCESSES_CONFIRM),
        with_file_io=False,
        with_processes=True,
        held_by_process=True,
    ),
    Attribution(
        "mm_struct",
        "address spaces",
        "processes (one per address space)",
        False,
        _PROCESSES_CONFIRM,
        with_file_io=False,
        with_processes=True,
    ),
    Attribution(
        "task_struct",
        "processes and threads",
        "fork()/clone(): processes and threads",
        False,
        _PROCESSES_CONFIRM,
        with_file_io=False,
        with_processes=True,
    ),
    Attribution(
        "pid",
        "processes and threads",
        "fork()/clone(), and pidfds",
        False,
        _PROCESSES_CONFIRM,
        with_file_io=False,
        with_processes=True,
    ),
    Attribution("cred_jar", "processes and threads", "credentials of tasks and open files", False, _PROCESSES_CONFIRM),
    Attribution(
        "signal_cache",
        "processes",
        "fork() of processes (one per thread group)",
        False,
        _PROCESSES_CONFIRM,
        with_file_io=False,
        with_processes=True,
    ),
    Attribution(
        "sighand_cache",
        "processes",
        "fork() of processes",
        False,
        _PROCESSES_CONFIRM,
        with_file_io=False,
        with_processes=True,
    ),
    Attribution(
        "files_cache",
        "processes",
        "fork() of processes (file tables)",
        False,
        _PROCESSES_CONFIRM,
        with_file_io=False,
        with_processes=True,
    ),
    Attribution(
        "fs_cache",
        "processes",
        "fork() of processes (cwd/root)",
        False,
        _PROCESSES_CONFIRM,
        with_file_io=False,
        with_processes=True,
    ),
    Attribution(
        "sock_inode_cache",
        "sockets",
        "socket()/accept()/socketpair(): one per socket",
        # SLAB_RECLAIM_ACCOUNT (counted in SReclaimable) is accounting only: no shrinker frees a live socket.
        False,
        _SOCKETS_CONFIRM,
        pinned_by="open sockets: a socket's inode is freed when the socket is closed, never by reclaim",
        reclaim_account=True,  # net/socket.c; /sys/kernel/slab/sock_inode_cache/reclaim_account is 1
        with_file_io=False,
        held_by_process=True,
    ),
    Attribution(
        "TCP*",
        "TCP sockets",
        "TCP sockets (socket(), accept())",
        False,
        _SOCKETS_CONFIRM,
        with_file_io=False,
        held_by_process=True,
    ),
    Attribution(
        "request_sock_TCP*",
        "TCP handshakes",
        "half-open TCP connections (SYN received)",
        False,
        ("ss -tn state syn-recv | wc -l",),
        # Dropped when the SYN-ACK retransmissions run out: 1 + 2 + ... + 32 s with the default
        # net.ipv4.tcp_synack_retries = 5 and TCP_TIMEOUT_INIT of 1 s (include/net/tcp.h).
        Lifetime(63.0, "a SYN_RECV request is dropped after 5 SYN-ACK retries, 63 s (tcp_synack_retries)"),
        with_file_io=False,
    ),
    Attribution(
        "tw_sock_TCP*",
        "TCP TIME_WAIT",
        "closed TCP connections in TIME_WAIT",
        False,
        ("ss -tan state time-wait | wc -l",),
        # TCP_TIMEWAIT_LEN (60 * HZ, include/net/tcp.h): a busy client or server holds rate x 60 s of them.
        Lifetime(60.0, "TIME_WAIT ends after 60 s (TCP_TIMEWAIT_LEN)"),
        with_file_io=False,
    ),
    Attribution(
        "UDP*",
        "UDP sockets",
        "UDP sockets (socket(AF_INET*, SOCK_DGRAM))",
        False,
        _SOCKETS_CONFIRM,
        with_file_io=False,
        held_by_process=True,
    ),
    Attribution(
        "UNIX*",
        "UNIX sockets",
        "AF_UNIX sockets (socket(), socketpair(), accept())",
        False,
        _SOCKETS_CONFIRM,
        with_file_io=False,
        held_by_process=True,
    ),
    *(
        Attribution(name, subject, allocated_by, False, _SOCKETS_CONFIRM, with_file_io=False, held_by_process=True)
        for name, subject, allocated_by in (
            ("RAW*", "raw sockets", "raw sockets"),
            ("PING*", "ping sockets", "ICMP ping sockets"),
            ("NETLINK", "netlink sockets", "netlink sockets"),
        )
    ),
    Attribution(
        "skbuff_*",
        "network buffers",
        "packets queued on sockets or devices",
        False,
        ("ss -tuanm (Recv-Q/Send-Q and skmem per socket)", "cat /proc/net/sockstat"),
    ),
    Attribution(
        "nf_conntrack*",
        "connection tracking",
        "netfilter conntrack entries (one per tracked flow)",
        False,
        ("cat /proc/sys/net/netfilter/nf_conntrack_count", "conntrack -L | awk '{print $1, $4}' | sort | uniq -c"),
    ),
    Attribution(
        "filp",
        "open files",
        "open()/socket()/pipe(): one per open file description",
        False,
        _FILES_CONFIRM,
        held_by_process=True,
    ),
    Attribution(
        "dentry",
        "path lookups",
        "path lookups and file creation (the dcache; unused dentries reclaimed under pressure)",
        True,
        ("cat /proc/sys/fs/dentry-state (unused and negative dentries are reclaimable)",),
        pinned_by="open files, sockets and working directories pin theirs; only unused and negative dentries are"
        " freed under pressure",
    ),
    Attribution(
        "names_cache",
        "path names",
        "getname() buffers of system calls taking a path (should be transient)",
        False,
        ("grep names_cache /proc/slabinfo (active objects should stay near the number of CPUs)",),
    ),
    Attribution(
        "shmem_inode_cache",
        "tmpfs/shm files",
        "files created in tmpfs, shm and memfd",
        # Not SLAB_RECLAIM_ACCOUNT: a tmpfs file has no backing store to be written to and dropped.
        False,
        ("df -h /dev/shm /tmp /run", "ls -l /proc/[0-9]*/fd | grep memfd | wc -l"),
        pinned_by="tmpfs, shm and memfd files: an inode lives as long as its file (until deleted and closed),"
        " never freed by reclaim",
    ),
    Attribution(
        "hugetlbfs_inode_cache",
        "hugetlbfs files",
        "files created in hugetlbfs mounts, and memfd_create(MFD_HUGETLB)",
        # Not SLAB_RECLAIM_ACCOUNT (fs/hugetlbfs/inode.c: SLAB_ACCOUNT; reclaim_account 0 read on 6.18): a hugetlbfs
        # file, like a tmpfs one, has no backing store.
        False,
        ("grep -i huge /proc/meminfo", "findmnt -t hugetlbfs"),
        pinned_by="hugetlbfs files: an inode lives as long as its file (until deleted and closed), never freed by"
        " reclaim",
    ),
    Attribution(
        "mqueue_inode_cache",
        "POSIX message queues",
        "mq_open(O_CREAT) of queues never mq_unlink()ed",
        # Not SLAB_RECLAIM_ACCOUNT (ipc/mqueue.c: SLAB_ACCOUNT; reclaim_account 0 read on 6.18).
        False,
        ("ls /dev/mqueue | wc -l (mount -t mqueue none /dev/mqueue)", "cat /proc/sys/fs/mqueue/queues_max"),
        pinned_by="POSIX message queues: a queue's inode lives until it is mq_unlink()ed and closed, never freed by"
        " reclaim",
    ),
    Attribution(
        "proc_inode_cache",
        "procfs lookups",
        "lookups in /proc (unused ones reclaimed under pressure)",
        True,
        ("cat /proc/sys/fs/inode-nr",),
        pinned_by=_INODES,
    ),
    Attribution(
        "inode_cache",
        "file inodes",
        "pseudo-filesystem inodes: pipes, anon inodes, sockfs",
        True,
        ("cat /proc/sys/fs/inode-nr",),
        pinned_by=_INODES,
    ),
    Attribution(
        "*inode_cache",
        "file inodes",
        "files opened or looked up on that filesystem (unused ones reclaimed under pressure)",
        True,
        ("cat /proc/sys/fs/inode-nr",),
        pinned_by=_INODES,
    ),
    Attribution(
        "xfs_inode",
        "file inodes",
        "files looked up on XFS (unused ones reclaimed under pressure)",
        True,
        ("cat /proc/sys/fs/inode-nr",),
        pinned_by=_INODES,
    ),
    # The inode caches of overlayfs, FUSE, btrfs and EROFS: SLAB_RECLAIM_ACCOUNT (reclaim_account 1 read on 6.18).
    *(
        Attribution(
            name,
            "file inodes",
            "files opened or looked up on that filesystem (unused ones reclaimed under pressure)",
            True,
            ("cat /proc/sys/fs/inode-nr",),
            pinned_by=_INODES,
        )
        for name in ("ovl_inode", "fuse_inode", "btrfs_inode", "erofs_inode")
    ),
    Attribution(
        "buffer_head",
        "page cache",
        "block device and filesystem metadata in the page cache",
        True,
        ("grep -E 'Buffers|Cached' /proc/meminfo; echo 3 > /proc/sys/vm/drop_caches frees them",),
    ),
    Attribution(
        "radix_tree_node",
        "page cache",
        "page cache indexes (xarray nodes of files' mappings)",
        True,
        ("grep -E 'Cached|Shmem' /proc/meminfo",),
    ),
    Attribution("xfs_*", "XFS metadata", "XFS buffers, log items and extents", True, ("xfs_info on the filesystems",)),
    Attribution(
        "ext4_*",
        "ext4 metadata",
        "ext4 extents, journal heads and allocation contexts",
        True,
        ("grep ext4 /proc/slabinfo",),
    ),
    Attribution(
        "eventpoll_*",
        "epoll watches",
        "epoll_ctl(EPOLL_CTL_ADD) of file descriptors",
        False,
        ("grep -c tfd /proc/[0-9]*/fdinfo/* | sort -t: -k2 -n | tail (epoll watches per process)",),
        held_by_process=True,
    ),
    Attribution(
        "inotify_inode_mark",
        "inotify watches",
        "inotify_add_watch()",
        False,
        ("grep -c inotify /proc/[0-9]*/fdinfo/* | sort -t: -k2 -n | tail", "cat /proc/sys/fs/inotify/max_user_watches"),
        held_by_process=True,
    ),
    Attribution(
        "kernfs_node_cache",
        "sysfs/cgroup nodes",
        "cgroups, sysfs and kernfs files created and not removed",
        False,
        ("find /sys/fs/cgroup -type d | wc -l", "cat /proc/cgroups"),
    ),
    Attribution("bio-*", "block I/O", "block I/O requests in flight", False, ("cat /sys/block/*/inflight",)),
    Attribution(
        "kmalloc-rcl-*", "generic kmalloc (reclaimable)", "kmalloc(__GFP_RECLAIMABLE): reclaimable objects", True, ()
    ),
    Attribution(
        "kmalloc-cg-*",
        "generic kmalloc (memcg)",
        "kmalloc(GFP_KERNEL_ACCOUNT) charged to a cgroup: pipes, poll tables, msg_msg, xattrs",
        False,
        ("cat /sys/fs/cgroup/*/memory.stat | grep slab (which cgroup holds it)",),
    ),
    Attribution("dma-kmalloc-*", "generic kmalloc (DMA)", "kmalloc(GFP_DMA) by drivers", False, ()),
    Attribution("kmalloc-*", "generic kmalloc", "kmalloc() of that size by any kernel code", False, ()),
    # The catch-all: a dedicated cache is usually named after its struct or module.
    Attribution(
        "*", "a dedicated cache", "the subsystem or module that created the cache (its name names it)", False, ()
    ),
)


def attribution_for(cache: str) -> Attribution:
    """The first rule of :data:`ATTRIBUTIONS` whose pattern matches ``cache``."""
    for rule in ATTRIBUTIONS:
        if fnmatch.fnmatchcase(cache, rule.pattern):
            return rule
    raise AssertionError("the catch-all rule matches every name")  # pragma: no cover


def generic_confirm_steps(cache: str) -> tuple[str, ...]:
    """Steps that confirm who allocates any cache: allocation traces and bcc tools."""
    return (
        f"boot with slub_debug=U,{cache} (also stops merging it), then read "
        f"/sys/kernel/debug/slab/{cache}/alloc_traces for the allocating call sites",
        "bcc slabratetop (which caches allocate fastest, live)",
        "bcc memleak (no -p: kernel allocations outstanding, with stacks)",
    )


def merged_names(cache: str, aliases: Mapping[str, str]) -> tuple[str, ...]:
    """Other cache names SLUB merged into the cache shown as ``cache``.

    ``aliases`` maps a merged name to the /sys/kernel/slab directory it shares
    (``signal_cache -> :0001088``); the cache shown in slabinfo is one of the
    names sharing that directory.
    """
    target = aliases.get(cache)
    if target is None:
        return ()
    return tuple(sorted(name for name, t in aliases.items() if t == target and name != cache))


def describe_aliases(cache: str, aliases: Mapping[str, str]) -> str | None:
    """``"shown as signal_cache, also holds UNIX"`` when other caches are merged into it, else None."""
    others = merged_names(cache, aliases)
    if not others:
        return None
    return f"shown as {cache}, also holds {', '.join(others)}"


def is_reclaimable(cache: str, reclaim_account: Mapping[str, bool]) -> bool:
    """Whether the kernel frees the cache's objects under pressure.

    The cache's own reclaim_account (SLAB_RECLAIM_ACCOUNT, counted in
    SReclaimable) when it was read, else the table's knowledge of the name;
    never a cache the table knows its objects' owners hold (``pinned_by``, not
    reclaimable): ``sock_inode_cache`` is SLAB_RECLAIM_ACCOUNT, yet only closing
    a socket frees its inode.
    """
    rule = attribution_for(cache)
    if rule.pinned_by and not rule.reclaimable:
        return False  # held by their owners (open sockets, existing files): reclaim_account is accounting only
    known = reclaim_account.get(cache)
    if known is not None:
        return known or rule.reclaimable
    return rule.reclaimable


def in_sreclaimable(cache: str, reclaim_account: Mapping[str, bool]) -> bool:
    """Whether the kernel counts the cache's slabs in SReclaimable (SLAB_RECLAIM_ACCOUNT), not SUnreclaim.

    Its own reclaim_account when read, else the table's guess (``Attribution.reclaim_account``, else
    ``reclaimable``: a store imported from snapshots holds no flags).  Not :func:`is_reclaimable`: the
    kernel counts ``sock_inode_cache`` as reclaimable though only closing a socket frees it.
    """
    known = reclaim_account.get(cache)
    if known is not None:
        return known
    rule = attribution_for(cache)
    return rule.reclaimable if rule.reclaim_account is None else rule.reclaim_account
