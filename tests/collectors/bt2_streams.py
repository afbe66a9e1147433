"""Print each stream's events of a CTF trace or session as python3-bt2 reads them, as JSON (run by the system
python3; exit 2 without bt2).

``{stream file path: [[ns from origin, cycles, name, origin is the epoch, packet], ...]}``: each stream's events
in its own order (what a citation's 1-based event number counts), ``packet`` 0-based in the stream.
"""

import json
import sys

try:
    import bt2
except ImportError:
    sys.stderr.write("python3-bt2 is not installed\n")
    sys.exit(2)

out = {}
packets = {}
for msg in bt2.TraceCollectionMessageIterator(sys.argv[1]):
    if type(msg) is bt2._PacketBeginningMessageConst:
        packets[msg.packet.stream.name] = packets.get(msg.packet.stream.name, -1) + 1
    if type(msg) is bt2._EventMessageConst:
        clock = msg.default_clock_snapshot
        out.setdefault(msg.event.stream.name, []).append(
            [
                clock.ns_from_origin,
                clock.value,
                msg.event.name,
                clock.clock_class.origin_is_unix_epoch,
                packets[msg.event.stream.name],
            ]
        )
print(json.dumps(out))
