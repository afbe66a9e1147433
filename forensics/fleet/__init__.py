"""Fleet scale on existing engines: leaks of many hosts from Prometheus, crash signatures of many logs on Dask.

:mod:`forensics.fleet.leaks` runs the leak detectors per instance on series
read from Prometheus (``kforensic leaks --prometheus``);
:mod:`forensics.fleet.signatures` triages many hosts' kernel logs on a Dask
cluster and groups the reports by signature (``kforensic dmesg --signatures``).
Heavy libraries (pandas, scipy, dask) are imported inside the functions.
"""
