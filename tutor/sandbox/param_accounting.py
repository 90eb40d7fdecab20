"""Parameter accounting for an instrumented re-run: where each trainable tensor lives, and
whether the objects the learner names as separate networks are really separate.

:class:`~tutor.sandbox.evidence.Recorder` owns one and calls it from the hooks it already has
(module calls, every tensor op) and from torch's public global hook for parameter
registration. It keeps, as plain data:

- parameters built while a module's forward ran (a layer or ``nn.Parameter`` made inside
  ``forward``): the line, the module whose forward it was, how many times that line made one,
  whether an optimizer ever held one of them;
- layers and tensors that require grad kept on a module inside a plain list, tuple or dict
  (``parameters()`` does not look there): the attribute that holds them;
- ``requires_grad`` set as an attribute of a Module (it freezes nothing: the flag lives on
  each parameter), or a misspelt flag on a parameter (``require_grad``);
- copies of a tensor onto itself (``target.load_state_dict(target.state_dict())``, or two
  names for one network): the destination and the source share their storage;
- one module object bound to two names of the learner's (``target_net = policy_net``).

Everything is bounded and sampled like the rest of the recorder; its own failures only mark
the evidence truncated.
"""

from __future__ import annotations

import difflib
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tutor.sandbox.evidence import Recorder

Data = dict[str, Any]

MAX_ENTRIES = 20
MAX_HELD = 200
"""Elements of one plain container looked at."""
FLAG = "requires_grad"


class ParamAccounting:
    """The parameter-accounting half of one instrumented run's evidence."""

    def __init__(self, recorder: Recorder) -> None:
        self.rec = recorder
        self.torch = recorder.torch
        self.built: dict[int, Data] = {}
        self.built_ids: dict[int, set[int]] = {}
        self.held: dict[int, tuple[str, str]] = {}
        """Tensor id -> (the attribute path of the plain container, its type)."""
        self.modules: dict[int, Any] = {}
        self.copies: dict[int, Data] = {}
        self.aliases: dict[tuple[str, ...], Data] = {}
        self.alias_seen: set[tuple[int, int]] = set()
        self.registered: set[int] = set()
        """The parameters() of the module being scanned."""
        self._internal = frozenset(vars(self.torch.nn.Module()))
        """The attributes every Module has (``_parameters``, ``_modules``, hooks, ``training``)."""

    # -- parameters registered while a forward runs ------------------------------------------
    def on_parameter(self, module: Any, name: str, param: Any) -> None:
        """torch's parameter-registration hook: a layer built (or ``self.x = nn.Parameter``
        assigned) while some module's forward is running is made anew at every call."""
        if param is None or not self.rec.stack or self.rec.in_internal:
            return
        frame = self.rec._learner_frame()
        if frame is None:
            return
        line = frame.f_lineno
        entry = self.built.get(line)
        if entry is None:
            if len(self.built) >= MAX_ENTRIES:
                return
            owner = self.rec._current_module()
            inside = module is self.rec.stack[-1]
            entry = self.built[line] = {
                "line": line, "module": owner[0][:120] if owner else None,
                "kind": owner[1][:80] if owner else None,
                "made": ("Parameter" if inside else type(module).__name__)[:80],
                "attr": name[:80] if inside else None, "count": 0}
        entry["count"] += 1
        ids = self.built_ids.setdefault(line, set())
        if len(ids) < MAX_HELD:
            ids.add(id(param))  # not watched: a new one at every call would crowd out the rest

    # -- what a module holds where parameters() does not look ---------------------------------
    def scan(self, module: Any, name: str) -> None:
        """Tensors that require grad and layers kept on ``module`` (or its submodules) in a
        plain list, tuple or dict: they are watched under the path that reaches them, and
        marked as held outside what ``parameters()`` sees."""
        self.modules.setdefault(id(module), module)
        self.registered = {id(p) for p in module.parameters()}
        for path, sub in module.named_modules():
            for attr, value in list(vars(sub).items()):
                # the Module's own bookkeeping (_parameters, _modules, hooks) is not the
                # learner's; the learner's private attributes (self._layers = []) are
                if attr in self._internal or not isinstance(value, (list, tuple, dict)):
                    continue
                where = ".".join(p for p in (path, attr) if p)
                self._held(value, f"{name}.{where}", where, type(value).__name__, 0)

    def _held(self, value: Any, shown: str, attr: str, container: str, depth: int) -> None:
        torch = self.torch
        items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
        for key, item in items[:MAX_HELD]:
            label = f"{shown}[{key!r}]" if isinstance(key, str) else f"{shown}[{key}]"
            if isinstance(item, torch.nn.Module):
                for pname, param in item.named_parameters():
                    self._mark(param, f"{label}.{pname}", attr, container)
            elif isinstance(item, torch.Tensor) and item.requires_grad and item.is_leaf:
                self._mark(item, label, attr, container)
            elif isinstance(item, (list, tuple, dict)) and depth < 1:
                self._held(item, label, attr, container, depth + 1)

    def _mark(self, tensor: Any, label: str, attr: str, container: str) -> None:
        if len(self.held) >= MAX_HELD or id(tensor) in self.registered:
            return  # a list of references to registered layers is only a convenience
        self.held.setdefault(id(tensor), (attr[:80], container[:20]))
        self.rec._watch(tensor, label[:120])

    # -- copies onto itself ----------------------------------------------------------------
    def on_op(self, name: str, inputs: list[Any], line: int) -> None:
        if name != "copy_" or len(inputs) < 2:
            return
        dest, src = inputs[0], inputs[1]
        torch = self.torch
        if not (isinstance(dest, torch.Tensor) and isinstance(src, torch.Tensor)) or (
                dest.numel() == 0 or dest.shape != src.shape):
            return
        shared = dest.untyped_storage().data_ptr() == src.untyped_storage().data_ptr() and (
            dest.storage_offset() == src.storage_offset())
        if not shared and not self._from_itself(dest, src):
            return
        entry = self.copies.get(line)
        if entry is None:
            if len(self.copies) >= MAX_ENTRIES:
                return
            entry = self.copies[line] = {"line": line, "count": 0, "params": []}
        entry["count"] += 1
        info = self.rec.params.get(id(dest))
        if info is not None and len(entry["params"]) < 20:
            entry["params"].append(str(info.get("global") or info["name"])[:120])

    def _from_itself(self, dest: Any, src: Any) -> bool:
        """``src`` was computed (by recorded ops) from ``dest`` and nothing else that holds
        values: ``t.copy_(0.99 * t + 0.01 * t)``, an average of a tensor with itself."""
        start = self.rec._record_of(src)
        if start is None or not dest.is_leaf:
            return False
        try:
            home = int(dest.untyped_storage().data_ptr())
        except Exception:  # no plain storage to compare
            return False
        leaves: set[int] = set()
        todo: list[int] = [start]
        seen: set[int] = set()
        while todo and len(seen) < 200:
            index = todo.pop()
            if index in seen:
                continue
            seen.add(index)
            record = self.rec.records[index]
            leaves.update(record.get("leaves", ()))
            todo.extend(i for i in record["inputs"] if i is not None)
        return leaves == {home}

    # -- one network, two names ------------------------------------------------------------
    def on_call(self, module: Any, frame: FrameType) -> None:
        """At a top-level call: every name of the learner's frame (and of its ``self``) bound
        to this module object; two or more are one network under several names."""
        key = (frame.f_lineno, id(module))
        if key in self.alias_seen or len(self.alias_seen) >= 200:
            return
        self.alias_seen.add(key)
        self.modules.setdefault(id(module), module)
        names = self._names(module, frame)
        if len(names) < 2:
            return
        self._alias(module, names, frame.f_lineno)

    def _names(self, obj: Any, frame: FrameType) -> list[str]:
        names: list[str] = []
        for scope in (frame.f_locals, frame.f_globals):
            for key, value in list(scope.items()):
                if value is obj and not key.startswith("__") and key not in names:
                    names.append(key)
        owner = frame.f_locals.get("self")
        if owner is not None and owner is not obj:
            members = dict(vars(owner))
            if isinstance(owner, self.torch.nn.Module):
                members.update(dict(owner.named_children()))
            for key, value in members.items():
                if value is obj and not key.startswith("_") and f"self.{key}" not in names:
                    names.append(f"self.{key}")
        return names

    def _alias(self, module: Any, names: list[str], line: int) -> None:
        key = tuple(sorted(names))
        entry = self.aliases.get(key)
        if entry is None:
            if len(self.aliases) >= MAX_ENTRIES:
                return
            entry = self.aliases[key] = {"names": list(key)[:8], "kind": type(module).__name__[
                :80], "lines": [], "ids": [id(p) for p in module.parameters()][:MAX_HELD]}
        if line and line not in entry["lines"] and len(entry["lines"]) < 8:
            entry["lines"].append(line)

    # -- the end ---------------------------------------------------------------------------
    def finish(self, namespace: dict[str, Any]) -> Data:
        torch = self.torch
        by_object: dict[int, list[str]] = {}
        for global_name, value in list(namespace.items()):
            if isinstance(value, torch.nn.Module) and not global_name.startswith("__"):
                self.modules.setdefault(id(value), value)
                by_object.setdefault(id(value), []).append(global_name)
        for key, names in by_object.items():
            if len(names) >= 2:
                self._alias(self.modules[key], names, 0)
        stepped = self.rec.optimizer_params
        aliases = []
        for entry in self.aliases.values():
            ids = entry.pop("ids")
            aliases.append({**entry, "trained": any(i in stepped for i in ids)})
        built = [{**entry, "in_optimizer": any(i in stepped for i in self.built_ids.get(
            entry["line"], ()))} for entry in self.built.values()]
        return {"built_in_forward": built[:MAX_ENTRIES], "self_copies":
                list(self.copies.values())[:MAX_ENTRIES], "aliases": aliases[:MAX_ENTRIES],
                "module_flags": self._flags(by_object)}

    def _flags(self, by_object: dict[int, list[str]]) -> list[Data]:
        """``requires_grad`` set as a plain attribute on a Module, and a misspelt
        ``requires_grad`` set on parameters: neither freezes anything."""
        torch = self.torch
        found: list[Data] = []
        seen: set[int] = set()
        for top in list(self.modules.values()):
            top_names = by_object.get(id(top)) or [self._module_name(top)]
            for path, sub in top.named_modules():
                if id(sub) in seen or len(found) >= MAX_ENTRIES:
                    continue
                seen.add(id(sub))
                if FLAG not in vars(sub):
                    continue
                named = by_object.get(id(sub))
                shown = named[0] if named else ".".join(p for p in (top_names[0], path) if p)
                params = [p for p in sub.parameters()]
                found.append({"target": shown[:120], "attr": FLAG, "kind": type(sub).__name__[
                    :80], "value": repr(vars(sub)[FLAG])[:40], "on": "module",
                    "params": self._param_names(params)})
        typos: dict[str, list[Any]] = {}
        for tensor in list(self.rec.param_refs.values()):
            if not isinstance(tensor, torch.Tensor):
                continue
            for attr in list(getattr(tensor, "__dict__", {})):
                if attr != FLAG and difflib.SequenceMatcher(None, attr, FLAG).ratio() >= 0.8:
                    typos.setdefault(attr, []).append(tensor)
        for attr, tensors in list(typos.items())[:5]:
            found.append({"target": self._param_names(tensors)[0] if tensors else "?",
                          "attr": attr[:40], "kind": "Parameter",
                          "value": repr(vars(tensors[0])[attr])[:40], "on": "parameter",
                          "params": self._param_names(tensors)})
        return found[:MAX_ENTRIES]

    def param_facts(self, key: int) -> Data:
        held = self.held.get(key)
        return {"held_in": held[0], "container": held[1]} if held else {}

    def _module_name(self, module: Any) -> str:
        info = self.rec.module_info.get(id(module))
        return info[0] if info else type(module).__name__

    def _param_names(self, params: list[Any]) -> list[str]:
        names = []
        for param in params[:20]:
            info = self.rec.params.get(id(param))
            names.append(str(info.get("global") or info["name"])[:120] if info else "?")
        return names
