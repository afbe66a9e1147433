"""``kforensic profile SRC --folded -`` alone: the folded stacks to stdout, what ``stackcollapse-perf.pl`` gives.

Run by the profile command's body (:func:`forensics.commands.profile_run.run_profile`) when only the folded stacks
are asked for, with typer or without it (:mod:`forensics.commandline`): importing typer and click and building the
command was ~19 ms of CPU of every such run (~5% of one on 50 MB; issue #28).  No typer import here.
"""

from forensics.types.profile_result import ProfileFilters


def folded_to_stdout(source: str, filters: ProfileFilters) -> None:
    """Read ``source`` (a path, or ``-`` for stdin) and write its folded stacks to stdout, nothing else."""
    from forensics.delivery import deliver
    from forensics.gcpause import gc_paused
    from forensics.pipelines.profile import folded_profile

    with gc_paused():
        deliver("".join(line + "\n" for line in folded_profile(source, filters)), None)
