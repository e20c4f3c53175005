"""``lipschitz-icl lock``: fix confirmatory claim designs in the design lock, or check them against it.

``lipschitz-icl lock --check [--json]`` lists every confirmatory claim whose design differs from the lock
(exit 1, naming what changed) or says all match (exit 0).  ``lipschitz-icl lock KEY [KEY ...] --reason TEXT``
re-locks those claims' designs with a new seed salt each, so a changed design draws fresh data
(:mod:`lipschitz_icl.gates.lock`); ``--keep-data`` keeps the salt (only to record an existing design as it
stands, e.g. the first lock).  The lock lives beside the registry in use (``$LIPSCHITZ_ICL_REGISTRY`` or
the package's ``claims/``).
"""

from __future__ import annotations

from lipschitz_icl.validation import ParameterError

NAME = "lock"
HELP = "check confirmatory claim designs against the design lock, or re-lock changed ones with a new seed salt"


def add_arguments(parser) -> None:
    parser.add_argument("keys", nargs="*", metavar="KEY", help="registry keys to (re-)lock, e.g. thm34.window-law")
    parser.add_argument("--check", action="store_true", help="only compare every confirmatory design with the lock")
    parser.add_argument("--reason", default="", help="why the design is (re-)locked (required to lock)")
    parser.add_argument(
        "--keep-data",
        action="store_true",
        help="keep the claim's seed salt (records an existing design; its data are not fresh)",
    )


def _specs(keys) -> list:
    from lipschitz_icl.gates import registry

    known = {s.key: s for s in registry.load()}
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise ParameterError("keys", f"registry keys (unknown: {', '.join(unknown)})", " ".join(keys))
    return [known[k] for k in keys]


def run(args):
    from lipschitz_icl.gates import lock, registry

    directory = registry.registry_dir()
    if args.check or not args.keys:
        if args.keys or args.reason or args.keep_data:
            raise ParameterError("check", "given alone (no KEY, --reason or --keep-data)", "--check")
        changed = {s.key: lock.changes(s) for s in registry.load() if s.status == "confirmatory"}
        changed = {k: v for k, v in changed.items() if v}
        return {"lock": str(directory / lock.LOCK_NAME), "changed": changed}, 1 if changed else 0
    if not args.reason.strip():
        raise ParameterError("reason", "a non-empty reason for the (re-)lock", args.reason)
    try:
        made = lock.relock(_specs(args.keys), args.reason, directory=directory, keep_data=args.keep_data)
    except lock.LockError as exc:
        raise ParameterError("keys", str(exc), " ".join(args.keys)) from None
    return {
        "lock": str(directory / lock.LOCK_NAME),
        "locked": [{"key": e.key, "design_hash": e.design_hash, "salt": e.salt, "fixed": e.fixed} for e in made],
    }, 0


def format_text(payload: dict) -> str:
    if "locked" in payload:
        return "\n".join(f"locked {e['key']}: design {e['design_hash']}, salt {e['salt']}" for e in payload["locked"])
    if not payload["changed"]:
        return f"every confirmatory design matches {payload['lock']}"
    return "\n".join(f"{key}: " + "; ".join(changes) for key, changes in payload["changed"].items())
