"""``drgn.helpers.linux`` without importing every helper module up front.

The package's ``__init__`` imports all of its submodules to offer every helper
under one name; one of them (``stack``) imports ``drgn.cli``, which brings the
REPL, the command framework and the sudo helper: about 0.1 s of a 0.6 s
``kforensic vmcore`` run, for modules the run never uses.  kforensic imports
helpers from their submodules (``drgn.helpers.linux.slab``), so it needs the
package only as a namespace.  :func:`defer_linux_helpers` puts that namespace
in place before the first helper import; a top-level name
(``drgn.helpers.linux.slab_cache_for_each``), ``__all__`` or a star import
makes it do what drgn's ``__init__`` does, then and only then.
"""

from __future__ import annotations

import importlib.util
import pkgutil
import sys
import types

PACKAGE = "drgn.helpers.linux"


def defer_linux_helpers() -> None:
    """Register ``drgn.helpers.linux`` as a package whose submodules load on demand (no-op once imported)."""
    if PACKAGE in sys.modules:
        return
    import drgn.helpers

    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.submodule_search_locations is None or spec.loader is None:
        return  # not drgn's usual layout: let the normal import happen
    loader = spec.loader
    module = types.ModuleType(PACKAGE, "drgn's Linux kernel helpers (loaded on demand)")
    module.__spec__ = spec
    module.__path__ = list(spec.submodule_search_locations)
    module.__file__ = spec.origin
    module.__package__ = PACKAGE
    submodules = {info.name.rpartition(".")[2] for info in pkgutil.iter_modules(module.__path__)}

    def __getattr__(name: str) -> object:  # noqa: N807 (PEP 562 module attribute hook)
        if name in submodules:
            # ``from drgn.helpers.linux import slab``: the import system loads the submodule itself.
            raise AttributeError(name)
        if "__all__" not in module.__dict__ and (name == "__all__" or not name.startswith("__")):
            loader.exec_module(module)  # drgn's own __init__, now: every submodule, every name
        if name in module.__dict__:
            return module.__dict__[name]
        raise AttributeError(f"module {PACKAGE!r} has no attribute {name!r}")

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[PACKAGE] = module
    drgn.helpers.linux = module  # type: ignore[attr-defined]


def complete_linux_helpers() -> None:
    """Load every helper now, as drgn's ``__init__`` would (its console reads ``__dict__["__all__"]``)."""
    module = sys.modules.get(PACKAGE)
    if module is not None and "__all__" not in module.__dict__:
        getattr(module, "__all__")  # noqa: B009 (the module's __getattr__ hook does the loading)
