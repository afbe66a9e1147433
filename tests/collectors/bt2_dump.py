"""Print a CTF trace's events as JSON with python3-bt2 (run by the system python3; exit 2 without bt2).

Field names as babeltrace2 gives them (it drops one leading underscore, as the kforensic decoders
do); a variant is ``{option: value}``; an enum is its integer value.
"""

import json
import sys

try:
    import bt2
except ImportError:
    sys.stderr.write("python3-bt2 is not installed\n")
    sys.exit(2)


def plain(f):
    if isinstance(f, bt2._StructureFieldConst):
        return {k: plain(v) for k, v in f.items()}
    if isinstance(f, bt2._VariantFieldConst):
        name = f.cls.option_at_index(f.selected_option_index).name
        return {name: plain(f.selected_option)}
    if isinstance(f, bt2._ArrayFieldConst):
        return [plain(v) for v in f]
    if isinstance(f, bt2._StringFieldConst):
        return str(f)
    if isinstance(f, bt2._IntegerFieldConst):
        return int(f)
    if isinstance(f, bt2._RealFieldConst):
        return float(f)
    return str(f)


out = []
for msg in bt2.TraceCollectionMessageIterator(sys.argv[1]):
    if type(msg) is bt2._EventMessageConst:
        out.append(
            {
                "name": msg.event.name,
                "cycles": msg.default_clock_snapshot.value,
                "fields": plain(msg.event.payload_field),
            }
        )
print(json.dumps(out))
