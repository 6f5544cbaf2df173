#!/usr/bin/env python3
"""Volcano vGPU invariants of a cluster, from the API's own record.

    vgpu_check.py NODES.json PODS.json

NODES.json and PODS.json are `kubectl get nodes -o json` and
`kubectl get pods -A -o json`. Checks that every pod placed on a volcano
vGPU node carries what the HAMi device plugin
(Project-HAMi/volcano-vgpu-device-plugin, pkg/util/util.go and types.go)
reads when the kubelet calls Allocate, and that no GPU is over-committed
the way volcano's scheduler counts it (its vgpu device_info.go AddResource).
Prints one line per problem and exits 1 if there is any; otherwise prints
one "ok: ..." line and exits 0.

A vGPU node carries volcano.sh/node-vgpu-register, the device plugin's list
of its GPUs: records "UUID,Count,Devmem,Type,Health,Mode:" back to back
(Count = the vGPU slots of the GPU, Devmem its memory in MiB).

A vGPU pod is bound (spec.nodeName), not finished, not being deleted, and
has a container asking volcano.sh/vgpu-number or volcano.sh/vgpu-memory.
Per such container: number = vgpu-number (1 when only vgpu-memory is
given), memory per vGPU = vgpu-memory (MiB, 0 = unset), percentage =
vgpu-memory-percentage (100 when unset and memory is 0), cores = vgpu-cores
(default 0); a limit wins over a request. Checked for each vGPU pod:

  - annotations volcano.sh/vgpu-node == spec.nodeName, volcano.sh/bind-phase
    == "allocating" (no device plugin runs in the tests, so nothing moves
    it on), volcano.sh/vgpu-time and volcano.sh/bind-time decimal Unix
    seconds within the last day (or a minute ahead), and
    volcano.sh/devices-to-allocate (what the plugin consumes) identical to
    volcano.sh/vgpu-ids-new (volcano's record);
  - vgpu-ids-new decodes as the plugin decodes it: one ';' entry per vGPU
    container in spec order, each the container's devices as
    "UUID,Type,Usedmem,Usedcores:"; Type exactly "NVIDIA" (the plugin picks
    devices by it), UUID containing "GPU" (the plugin's "done" test) and
    registered by the node, distinct within a container, as many as the
    container's number, Usedmem its memory (or Devmem * percentage // 100
    when memory is unset), Usedcores its cores;
  - the plugin can find the pod: GetPendingPod keeps pods whose vgpu-node is
    the node and whose devices-to-allocate holds, in total over all
    containers, as many devices as the kubelet asks for ONE container. A pod
    with two vGPU containers therefore never matches.

Per vGPU node, summing the decoded entries of its vGPU pods on each GPU
(an entry is on a GPU when the GPU's UUID is contained in the entry's, as
volcano matches): entries <= Count, memory <= Devmem, cores <= 100, and a
GPU holding an entry with cores 100 holds nothing else.

Per node, the kubelet's admission rule for the volcano.sh/vgpu-* extended
resources: the requests of the live pods bound there (a missing request is
the limit), summed, are within the node's allocatable.
"""
import json
import math
import sys
import time

from gpu_check import quantity  # Kubernetes quantities, as gpu_check.py reads them

NUMBER = "volcano.sh/vgpu-number"
MEMORY = "volcano.sh/vgpu-memory"
PERCENT = "volcano.sh/vgpu-memory-percentage"
CORES = "volcano.sh/vgpu-cores"
VGPU_PREFIX = "volcano.sh/vgpu-"

REGISTER = "volcano.sh/node-vgpu-register"
A_NODE = "volcano.sh/vgpu-node"
A_TIME = "volcano.sh/vgpu-time"
A_IDS = "volcano.sh/vgpu-ids-new"
A_TODO = "volcano.sh/devices-to-allocate"
A_PHASE = "volcano.sh/bind-phase"
A_BIND_TIME = "volcano.sh/bind-time"

PAST, FUTURE = 86400, 60  # accepted age of vgpu-time / bind-time, seconds


def integer(v):
    """A plain integer quantity ("8000", 8000), or None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    s = str(v).strip()
    if s.startswith("+"):
        s = s[1:]
    return int(s) if s and all(ch in "0123456789" for ch in s) else None


def count(v):
    """A resource quantity as a whole count, as Quantity.Value() gives it
    (the API server writes 8000 back as "8k"), or None when it does not
    parse."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    try:
        return math.ceil(quantity(v))
    except ValueError:
        return None


def decimal(s):
    """A string of ASCII digits as an int, else None (ParseUint's format)."""
    return int(s) if isinstance(s, str) and s and all(ch in "0123456789" for ch in s) else None


def pod_key(p):
    m = p["metadata"]
    return f"{m.get('namespace', '')}/{m.get('name', '')}"


def parse_register(node, s, bad):
    """The node's GPUs: a list of {uuid, count, devmem, type}."""
    devs = []
    if s and not s.endswith(":"):
        bad.append(f"node {node}: {REGISTER} does not end with ':' ({s!r})")
    records = s.split(":")
    if records and records[-1] == "":
        records = records[:-1]
    for r in records:
        f = r.split(",")
        if len(f) < 6:
            bad.append(f"node {node}: {REGISTER} record {r!r} has {len(f)} comma fields, want >= 6")
            continue
        count, devmem = integer(f[1]), integer(f[2])
        if count is None or devmem is None:
            bad.append(f"node {node}: {REGISTER} record {r!r}: Count {f[1]!r} / Devmem {f[2]!r} "
                       "not integers")
            continue
        if any(d["uuid"] == f[0] for d in devs):
            bad.append(f"node {node}: {REGISTER} lists {f[0]} twice")
            continue
        devs.append({"uuid": f[0], "count": count, "devmem": devmem, "type": f[3]})
    return devs


def decode_assignment(who, s, bad):
    """vgpu-ids-new as the device plugin splits it: the non-empty ';' entries,
    each a list of (uuid, type, usedmem, usedcores). Malformed devices are
    reported and dropped."""
    containers = []
    for entry in s.split(";"):
        if entry == "":
            continue
        if not entry.endswith(":"):
            bad.append(f"{who}: {A_IDS} entry {entry!r} does not end with ':'")
        devices = []
        for part in entry.split(":"):
            if part == "":
                continue
            f = part.split(",")
            if len(f) != 4:
                bad.append(f"{who}: {A_IDS} device {part!r} has {len(f)} comma fields, want 4")
                continue
            mem, cores = integer(f[2]), integer(f[3])
            if mem is None or cores is None:
                bad.append(f"{who}: {A_IDS} device {part!r}: Usedmem/Usedcores not integers")
                continue
            devices.append((f[0], f[1], mem, cores))
        containers.append(devices)
    return containers


def plugin_device_count(s):
    """DecodePodDevices' count: the ':' pieces holding a ',' in every entry."""
    return sum(1 for entry in s.split(";") for part in entry.split(":") if "," in part)


def resource_view(c, first, second):
    """Resources of container c, each from `first` (limits/requests), else `second`."""
    res = c.get("resources") or {}
    out = dict(res.get(second) or {})
    out.update(res.get(first) or {})
    return out


def vgpu_asks(who, c, bad):
    """What a container asks of vGPU, or None if it is no vGPU container."""
    r = resource_view(c, "limits", "requests")
    if NUMBER not in r and MEMORY not in r:
        return None
    vals = {}
    for k in (NUMBER, MEMORY, PERCENT, CORES):
        if k in r:
            vals[k] = count(r[k])
            if vals[k] is None:
                bad.append(f"{who} container {c.get('name')}: {k} {r[k]!r} is not a quantity")
                return None
    memory = vals.get(MEMORY, 0)
    pct = vals.get(PERCENT)
    if pct is None and memory == 0:
        pct = 100
    return {"name": c.get("name"), "number": vals.get(NUMBER, 1), "memory": memory,
            "pct": pct, "cores": vals.get(CORES, 0),
            "kubelet": vals.get(NUMBER, 0)}  # the devices kubelet asks the plugin for


def check_time(who, ann, key, now, bad):
    v = ann.get(key)
    t = decimal(v)
    if t is None:
        bad.append(f"{who}: {key} {v!r} is not decimal Unix seconds")
    elif not now - PAST <= t <= now + FUTURE:
        bad.append(f"{who}: {key} {t} is not within [{now - PAST}, {now + FUTURE}] (now {now})")


def check_container(who, want, devices, by_uuid, bad):
    """One vGPU container against its decoded ids-new entry."""
    cname = f"{who} container {want['name']}"
    if len(devices) != want["number"]:
        bad.append(f"{cname}: {A_IDS} gives {len(devices)} device(s), it asks "
                   f"{NUMBER} {want['number']}")
    seen = set()
    for uuid, typ, mem, cores in devices:
        if typ != "NVIDIA":
            bad.append(f"{cname}: device {uuid} has type {typ!r}, the plugin wants exactly 'NVIDIA'")
        if "GPU" not in uuid:
            bad.append(f"{cname}: device UUID {uuid!r} does not contain 'GPU'")
        if uuid in seen:
            bad.append(f"{cname}: device {uuid} given twice")
        seen.add(uuid)
        dev = by_uuid.get(uuid)
        if dev is None:
            if by_uuid:
                bad.append(f"{cname}: device {uuid} is not registered by its node "
                           f"(node has {', '.join(sorted(by_uuid))})")
            continue
        if want["memory"] > 0:
            want_mem = want["memory"]
        else:
            want_mem = dev["devmem"] * (want["pct"] or 0) // 100
        if mem != want_mem:
            bad.append(f"{cname}: device {uuid} Usedmem {mem}, want {want_mem} "
                       f"({MEMORY} {want['memory']}, {PERCENT} {want['pct']}, Devmem {dev['devmem']})")
        if cores != want["cores"]:
            bad.append(f"{cname}: device {uuid} Usedcores {cores}, want {CORES} {want['cores']}")


def check_pod(p, devs, now, bad):
    """A vGPU pod's annotations; returns its decoded entries for the books."""
    who = f"pod {pod_key(p)}"
    node = p["spec"]["nodeName"]
    ann = p["metadata"].get("annotations") or {}
    wants = [w for w in (vgpu_asks(who, c, bad) for c in p["spec"].get("containers") or []) if w]
    if ann.get(A_NODE) != node:
        bad.append(f"{who}: {A_NODE} {ann.get(A_NODE)!r}, want its node {node!r}")
    if ann.get(A_PHASE) != "allocating":
        bad.append(f"{who}: {A_PHASE} {ann.get(A_PHASE)!r}, want 'allocating'")
    check_time(who, ann, A_TIME, now, bad)
    check_time(who, ann, A_BIND_TIME, now, bad)
    ids, todo = ann.get(A_IDS), ann.get(A_TODO)
    if ids is None:
        bad.append(f"{who}: no {A_IDS}")
        return []
    if todo != ids:
        bad.append(f"{who}: {A_TODO} {todo!r} differs from {A_IDS} {ids!r}")
    if devs is None:
        bad.append(f"{who}: its node {node} registers no vGPU device ({REGISTER} missing)")
    by_uuid = {d["uuid"]: d for d in devs or []}
    containers = decode_assignment(who, ids, bad)
    if len(containers) != len(wants):
        bad.append(f"{who}: {A_IDS} has {len(containers)} non-empty container entr(ies), "
                   f"the pod has {len(wants)} vGPU container(s)")
    for want, devices in zip(wants, containers):
        check_container(who, want, devices, by_uuid, bad)
    # GetPendingPod: total devices in devices-to-allocate == one container's request.
    total = plugin_device_count(todo or "")
    asks = [w["kubelet"] for w in wants]
    if len(wants) > 1:
        bad.append(f"{who}: {len(wants)} vGPU containers (kubelet asks {asks} device(s) per "
                   f"container, {A_TODO} holds {total} in total): it would never be found by "
                   "the device plugin")
    elif wants and asks[0] > 0 and asks[0] != total:
        bad.append(f"{who}: kubelet asks {asks[0]} device(s), {A_TODO} holds {total}: "
                   "it would never be found by the device plugin")
    return [d for devices in containers for d in devices]


def check_books(node, devs, entries, bad):
    """Per GPU of a vGPU node, its vGPU pods' entries as volcano counts them."""
    for dev in devs:
        on = [(who, e) for who, e in entries if dev["uuid"] in e[0]]
        num = len(on)
        mem = sum(e[2] for _, e in on)
        cores = sum(e[3] for _, e in on)
        name = f"node {node} GPU {dev['uuid']}"
        if num > dev["count"]:
            bad.append(f"{name}: {num} vGPUs > its Count {dev['count']}")
        if mem > dev["devmem"]:
            bad.append(f"{name}: memory {mem} MiB > its Devmem {dev['devmem']}")
        if cores > 100:
            bad.append(f"{name}: cores {cores} > 100")
        exclusive = [who for who, e in on if e[3] == 100]
        if exclusive and num > 1:
            bad.append(f"{name}: {exclusive[0]} holds it with cores 100, yet it holds "
                       f"{num} entries ({', '.join(who for who, _ in on)})")


def vgpu_requests(who, p, bad):
    """The pod's volcano.sh/vgpu-* requests as the kubelet sums them."""
    total = {}
    for c in p["spec"].get("containers") or []:
        for k, v in resource_view(c, "requests", "limits").items():
            if k.startswith(VGPU_PREFIX):
                n = count(v)
                if n is None:
                    bad.append(f"{who} container {c.get('name')}: {k} {v!r} is not a quantity")
                    continue
                total[k] = total.get(k, 0) + n
    for c in p["spec"].get("initContainers") or []:
        for k, v in resource_view(c, "requests", "limits").items():
            n = count(v)
            if k.startswith(VGPU_PREFIX) and n is not None:
                total[k] = max(total.get(k, 0), n)
    return total


def check_allocatable(node, n, pods, bad):
    alloc = (n or {}).get("status", {}).get("allocatable") or {}
    used = {}
    for p in pods:
        for k, v in vgpu_requests(f"pod {pod_key(p)}", p, bad).items():
            used[k] = used.get(k, 0) + v
    for k, v in sorted(used.items()):
        have = count(alloc.get(k, 0))
        if have is None:
            bad.append(f"node {node}: allocatable {k} {alloc[k]!r} is not a quantity")
        elif v > have:
            bad.append(f"node {node}: {k} requested {v} > allocatable {have}")


def live(p):
    return (p.get("spec", {}).get("nodeName")
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            and not p["metadata"].get("deletionTimestamp"))


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    nodes = json.load(open(sys.argv[1]))["items"]
    pods = [p for p in json.load(open(sys.argv[2]))["items"] if live(p)]
    now = int(time.time())
    bad = []
    node_obj = {n["metadata"]["name"]: n for n in nodes}
    node_devs = {}
    for name, n in node_obj.items():
        ann = n["metadata"].get("annotations") or {}
        if REGISTER in ann:
            node_devs[name] = parse_register(name, ann[REGISTER], bad)
    by_node = {}
    for p in pods:
        by_node.setdefault(p["spec"]["nodeName"], []).append(p)
    vgpu_pods = 0
    for node, on in sorted(by_node.items()):
        if node not in node_obj:
            bad.append(f"node {node}: pods are bound to it, but it is not in {sys.argv[1]}")
        entries = []
        for p in on:
            scratch = []  # vgpu_asks' findings are reported once, by check_pod
            if not any(vgpu_asks("", c, scratch) for c in p["spec"].get("containers") or []) \
                    and not scratch:
                continue
            vgpu_pods += 1
            who = f"pod {pod_key(p)}"
            entries += [(who, e) for e in check_pod(p, node_devs.get(node), now, bad)]
        if node in node_devs:
            check_books(node, node_devs[node], entries, bad)
        check_allocatable(node, node_obj.get(node), on, bad)
    for b in bad:
        print("BROKEN: " + b)
    if bad:
        return 1
    print(f"ok: {vgpu_pods} vGPU pods on {len(node_devs)} vGPU node(s), "
          "devices within their slots, memory and cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
