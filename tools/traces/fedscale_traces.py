#!/usr/bin/env python3
"""Convert FedScale's client traces (Python pickles) into drift's CSV trace formats.

FedScale (Lai et al., OSDI'22) distributes two traces as pickles:
  availability ("client_behave_trace"): {client: {"active": [t, ...], "inactive": [t, ...],
      "finish_time": T, ...}}, online over [active[i], inactive[i]), repeating every T seconds;
  device capacity ("client_device_capacity"): {client: {"computation": ms per sample,
      "communication": kbit/s}}.
drift reads availability as CSV `client,start,end` (availability.model = "trace") and system
profiles as CSV `client,speed,up_bandwidth,down_bandwidth,latency` (profile.trace).

Unpickling runs code named in the file, so this reads pickles with an unpickler that refuses
every class and function: only dicts, lists, tuples, strings and numbers come out, and a file
that asks for anything else is refused before it can run. Python's standard library only.

Trace clients are mapped onto drift's ids 0..N-1 by a seeded rule: the trace's client ids,
sorted, shuffled with random.Random(--seed), the first N taken (--clients; default all), so
the same seed maps the same way on every machine.

usage: fedscale_traces.py availability TRACE.pkl OUT.csv [--clients N] [--seed S] [--horizon SECONDS]
       fedscale_traces.py devices CAPACITY.pkl OUT.csv [--clients N] [--seed S] [--latency S]
"""
import argparse
import io
import math
import pickle
import random
import sys


class RefusedPickle(Exception):
    pass


class DataOnlyUnpickler(pickle.Unpickler):
    """Refuses every global (class, function) and persistent id: data only."""

    def find_class(self, module, name):
        raise RefusedPickle(f"the pickle asks for {module}.{name}; only dicts, lists and numbers are accepted")

    def persistent_load(self, pid):
        raise RefusedPickle("the pickle refers to a persistent object; only dicts, lists and numbers are accepted")


def check_data(value, where="the pickle"):
    if isinstance(value, dict):
        for k, v in value.items():
            check_data(k, where)
            check_data(v, where)
    elif isinstance(value, (list, tuple)):
        for v in value:
            check_data(v, where)
    elif not isinstance(value, (int, float, str, bool)) and value is not None:
        raise RefusedPickle(f"{where} holds a {type(value).__name__}; only dicts, lists and numbers are accepted")


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        value = DataOnlyUnpickler(io.BytesIO(data)).load()
    except RefusedPickle:
        raise
    except Exception as e:  # a damaged or non-pickle file
        raise RefusedPickle(f"not a readable pickle ({e})")
    check_data(value)
    if not isinstance(value, dict) or not value:
        raise RefusedPickle("expected a non-empty dict of clients")
    return value


def mapping(trace_ids, clients, seed):
    ids = sorted(trace_ids, key=lambda c: (str(type(c)), c))
    random.Random(seed).shuffle(ids)
    if clients:
        if clients > len(ids):
            raise RefusedPickle(f"--clients {clients} is more than the {len(ids)} clients the trace holds")
        ids = ids[:clients]
    return ids


def number(entry, key, client):
    value = entry.get(key) if isinstance(entry, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RefusedPickle(f"client {client!r}: '{key}' is not a finite number")
    return float(value)


def availability(trace, out, clients, seed, horizon):
    rows = 0
    out.write("client,start,end\n")
    for drift_id, client in enumerate(mapping(trace.keys(), clients, seed)):
        entry = trace[client]
        period = number(entry, "finish_time", client)
        active, inactive = entry.get("active"), entry.get("inactive")
        if not isinstance(active, list) or not isinstance(inactive, list) or len(active) != len(inactive):
            raise RefusedPickle(f"client {client!r}: 'active' and 'inactive' must be lists of equal length")
        if period <= 0:
            raise RefusedPickle(f"client {client!r}: 'finish_time' must be positive")
        intervals = sorted((float(a), float(b)) for a, b in zip(active, inactive) if b > a)
        repeat = 0
        end_of_trace = horizon if horizon > 0 else period
        while repeat * period < end_of_trace:
            for a, b in intervals:
                start, end = a + repeat * period, min(b, period) + repeat * period
                if start >= end_of_trace or end <= start:
                    continue
                out.write(f"{drift_id},{start!r},{min(end, end_of_trace)!r}\n")
                rows += 1
            repeat += 1
    return rows


def devices(capacity, out, clients, seed, latency, augmentation):
    out.write("client,speed,up_bandwidth,down_bandwidth,latency\n")
    ids = mapping(capacity.keys(), clients, seed)
    for drift_id, client in enumerate(ids):
        ms = number(capacity[client], "computation", client)
        kbps = number(capacity[client], "communication", client)
        if ms <= 0 or kbps <= 0:
            raise RefusedPickle(f"client {client!r}: computation and communication must be positive")
        # FedScale's completion time: augmentation x samples x computation ms, and kbit / kbit/s.
        speed = 1000.0 / (augmentation * ms)
        bandwidth = kbps * 1024.0 / 8.0
        out.write(f"{drift_id},{speed!r},{bandwidth!r},{bandwidth!r},{latency!r}\n")
    return len(ids)


def main(argv):
    parser = argparse.ArgumentParser(description="Convert FedScale's trace pickles into drift's CSV traces.")
    parser.add_argument("kind", choices=["availability", "devices"])
    parser.add_argument("pickle")
    parser.add_argument("out")
    parser.add_argument("--clients", type=int, default=0, help="map this many trace clients (default: all)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the client mapping (default 1)")
    parser.add_argument("--horizon", type=float, default=0.0,
                        help="availability: repeat each client's trace up to this many seconds (default: one period)")
    parser.add_argument("--latency", type=float, default=0.05, help="devices: latency each way, seconds (default 0.05)")
    parser.add_argument("--augmentation", type=float, default=3.0,
                        help="devices: FedScale's augmentation factor, forward + backward cost (default 3)")
    args = parser.parse_args(argv)
    try:
        data = load(args.pickle)
        out = io.StringIO()  # written whole at the end: a refused trace leaves no file behind
        if args.kind == "availability":
            n = availability(data, out, args.clients, args.seed, args.horizon)
        else:
            n = devices(data, out, args.clients, args.seed, args.latency, args.augmentation)
        with open(args.out, "w") as f:
            f.write(out.getvalue())
    except RefusedPickle as e:
        print(f"fedscale_traces: {args.pickle}: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"fedscale_traces: {e}", file=sys.stderr)
        return 2
    print(f"{args.out}: {n} {'intervals' if args.kind == 'availability' else 'clients'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
