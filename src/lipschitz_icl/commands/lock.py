"""``lipschitz-icl lock``: fix claim designs in the design lock, or check them against it.

``lipschitz-icl lock --check [--json]`` lists every confirmatory claim, and every locked claim whatever its
status now, whose design differs from the lock, and every locked claim no longer in the registry (exit 1,
naming what changed), or says all match (exit 0).  ``lipschitz-icl lock KEY [KEY ...] --reason TEXT``
re-locks those claims' designs with a new seed salt each, so a changed design draws fresh data
(:mod:`lipschitz_icl.gates.lock`; a stochastic claim whose design matches its lock is not re-locked); a KEY
that is locked but no longer in the registry is retired from the lock (the history keeps the event).
``--keep-data`` keeps the salt: for a deterministic claim, or for a stochastic claim at its first lock only;
the history records it.  The lock lives beside the registry in use (``$LIPSCHITZ_ICL_REGISTRY`` or the
package's ``claims/``); a malformed lock, or one that is a symbolic link, is one line and exit 2.
"""

from __future__ import annotations

from lipschitz_icl.validation import ParameterError

NAME = "lock"
HELP = "check claim designs against the design lock, or re-lock changed ones with a new seed salt"


def add_arguments(parser) -> None:
    parser.add_argument("keys", nargs="*", metavar="KEY", help="registry keys to (re-)lock, e.g. thm34.window-law")
    parser.add_argument("--check", action="store_true", help="only compare every locked design with the lock")
    parser.add_argument("--reason", default="", help="why the design is (re-)locked (required to lock)")
    parser.add_argument(
        "--keep-data",
        action="store_true",
        help="keep the claim's seed salt: deterministic claims, or a stochastic claim's first lock (recorded)",
    )


def _split(keys, known: dict, locked: dict) -> tuple[list, list]:
    """``(registry specs to lock, locked keys to retire)``; a key in neither is refused, a repeated one counted once."""
    keys = list(dict.fromkeys(keys))
    unknown = [k for k in keys if k not in known and k not in locked]
    if unknown:
        raise ParameterError("keys", f"registry keys (unknown: {', '.join(unknown)})", " ".join(keys))
    return [known[k] for k in keys if k in known], [k for k in keys if k not in known]


def _lock(args, directory) -> list:
    from lipschitz_icl.gates import lock, registry

    known = {s.key: s for s in registry.load()}
    specs, gone = _split(args.keys, known, lock.read(directory)[0])  # an unknown key first, then the reason
    if not args.reason.strip():
        raise ParameterError("reason", "a non-empty reason for the (re-)lock", args.reason)
    if gone and args.keep_data:
        raise ParameterError("keep-data", "left out when retiring claims that left the registry", True)
    made = []
    if specs:
        made += lock.relock(specs, args.reason, directory=directory, keep_data=args.keep_data)
    if gone:
        made += lock.retire(gone, args.reason, directory=directory)
    return made


def run(args):
    from lipschitz_icl.gates import lock, registry

    directory = registry.registry_dir()
    try:
        if args.check or not args.keys:
            if args.check and (args.keys or args.reason or args.keep_data):
                raise ParameterError("check", "given alone (no KEY, --reason or --keep-data)", "--check")
            if args.reason or args.keep_data:  # no key: nothing to (re-)lock
                option = "--reason" if args.reason else "--keep-data"
                raise ParameterError("keys", f"given with {option} (the registry keys to (re-)lock)", None)
            changed = lock.checked_changes(registry.load(), directory)
            return {"lock": str(directory / lock.LOCK_NAME), "changed": changed}, 1 if changed else 0
        made = _lock(args, directory)
    except lock.LockFileError as exc:
        raise registry.RegistryError(str(exc)) from None
    except lock.KeepDataError as exc:
        raise ParameterError("keep-data", f"left out here ({exc})", True) from None
    except lock.LockError as exc:
        raise ParameterError("keys", f"keys the lock accepts ({exc})", " ".join(args.keys)) from None
    return {
        "lock": str(directory / lock.LOCK_NAME),
        "locked": [
            {
                "key": e.key,
                "design_hash": e.design_hash,
                "salt": e.salt,
                "fixed": e.fixed,
                "kept_data": e.kept_data,
                "retired": e.retired,
            }
            for e in made
        ],
    }, 0


def format_text(payload: dict) -> str:
    if "locked" in payload:
        return "\n".join(_event_line(e) for e in payload["locked"])
    if not payload["changed"]:
        return f"every locked design matches {payload['lock']}"
    return "\n".join(f"{key}: " + "; ".join(changes) for key, changes in payload["changed"].items())


def _event_line(event: dict) -> str:
    if event["retired"]:
        return f"retired {event['key']}: design {event['design_hash']}, salt {event['salt']} (left the registry)"
    kept = " (data kept: same salt)" if event["kept_data"] else ""
    return f"locked {event['key']}: design {event['design_hash']}, salt {event['salt']}{kept}"
