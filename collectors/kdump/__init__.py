"""Reading a system's crash-dump (kdump) setup: see :func:`collectors.kdump.state.collect_kdump_state`."""
