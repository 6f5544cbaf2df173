#!/usr/bin/env python3
"""GPU invariants of a cluster, from the API's own record.

    gpu_check.py NODES.json PODS.json

NODES.json and PODS.json are `kubectl get nodes -o json` and
`kubectl get pods -A -o json`. Prints one line per finding and, for every
GPU node, the view Arena's `arena top node -d` computes (reproduced from
kubeflow/arena pkg/topnode/gpushare.go, gpuexclusive.go and
pkg/apis/utils: Arena itself cannot be fetched here). Exit status 1 when
an invariant is broken:

  - the kubelet's admission rule: on every node, the requests of the pods
    bound there and not finished, summed per resource, are within the
    node's allocatable (an extended resource's request is its limit when
    only the limit is given);
  - Alibaba's GPU sharing: every bound pod asking for aliyun.com/gpu-mem
    carries the annotations its device plugin reads, as
    gpushare-scheduler-extender writes them (ALIYUN_COM_GPU_MEM_IDX a device
    the node has, _POD the pod's gpu-mem, _DEV one device's gpu-mem,
    _ASSIGNED "false" until the device plugin takes it, _ASSUME_TIME Unix
    nanoseconds), and no device holds more than its gpu-mem;
  - Arena's view agrees: every gpu-mem pod is on a device Arena sees, no
    device over 100 %, used GPUs within the total on exclusive nodes;
  - a pod on a node whose device plugin shares GPUs by replicas (GFD's
    nvidia.com/gpu.replicas > 1) has no kube-batchd.io/gpu-devices: the
    device plugin picks its replicas.
"""
import json
import sys
import time

GPU = "nvidia.com/gpu"
MEM = "aliyun.com/gpu-mem"
COUNT = "aliyun.com/gpu-count"
ARENA_SHARE_LABELS = [("gpushare", "true"), ("cgpu", "true"),
                      ("ack.node.gpu.schedule", "share"), ("ack.node.gpu.schedule", "cgpu")]

SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
          "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
          "P": 1e15, "E": 1e18}


def quantity(s):
    s = str(s)
    for suf in sorted(SUFFIX, key=len, reverse=True):
        if s.endswith(suf):
            return float(s[:-len(suf)]) * SUFFIX[suf]
    return float(s)


def container_requests(c):
    res = c.get("resources") or {}
    req = dict(res.get("requests") or {})
    for k, v in (res.get("limits") or {}).items():
        req.setdefault(k, v)  # the API defaults a missing request to the limit
    return {k: quantity(v) for k, v in req.items()}


def pod_requests(p):
    total = {}
    for c in p["spec"].get("containers", []):
        for k, v in container_requests(c).items():
            total[k] = total.get(k, 0) + v
    for c in p["spec"].get("initContainers", []) or []:
        for k, v in container_requests(c).items():
            total[k] = max(total.get(k, 0), v)
    total["pods"] = 1
    return total


def arena_limits_in_pod(p, res):
    """The containers' limits of res: utils.GPUMemoryCountInPod for MEM,
    utils.GPUCountInPod for GPU."""
    return sum(int(quantity((c.get("resources") or {}).get("limits", {}).get(res, 0)))
               for c in p["spec"].get("containers", []))


def arena_allocation(p):
    """utils.GetPodAllocation, without the newer JSON allocation annotation."""
    idx = (p["metadata"].get("annotations") or {}).get("ALIYUN_COM_GPU_MEM_IDX", "")
    return {idx: arena_limits_in_pod(p, MEM)} if idx != "" else {}


def main():
    nodes = json.load(open(sys.argv[1]))["items"]
    pods = json.load(open(sys.argv[2]))["items"]
    bad = []
    live = [p for p in pods if p["spec"].get("nodeName")
            and p.get("status", {}).get("phase") not in ("Succeeded", "Failed")]
    by_node, reqs = {}, {}
    for p in live:
        by_node.setdefault(p["spec"]["nodeName"], []).append(p)
        reqs[id(p)] = pod_requests(p)
    now_ns = time.time() * 1e9
    for n in nodes:
        name = n["metadata"]["name"]
        labels = n["metadata"].get("labels") or {}
        alloc = {k: quantity(v) for k, v in (n["status"].get("allocatable") or {}).items()}
        # Arena reads the capacity; a kubelet always reports it, but nodes
        # made by hand (the scenarios') may give only the allocatable.
        cap = {k: quantity(v) for k, v in (n["status"].get("capacity") or {}).items()}
        for k, v in alloc.items():
            cap.setdefault(k, v)
        on = by_node.get(name, [])
        used = {}
        for p in on:
            for k, v in reqs[id(p)].items():
                used[k] = used.get(k, 0) + v
        for k, v in used.items():
            if k in alloc and v > alloc[k] + 1e-9:
                bad.append(f"node {name}: {k} requested {v:g} > allocatable {alloc[k]:g}")
            if k not in alloc and v > 0 and "/" in k:
                bad.append(f"node {name}: {k} requested {v:g}, the node advertises none")
        # Alibaba's GPU sharing, as its device plugin and the extender count it.
        count = int(cap.get(COUNT, alloc.get(COUNT, 0)))
        per_dev = int(alloc.get(MEM, 0)) // count if count else 0
        dev_used = {}
        for p in on:
            mem = reqs[id(p)].get(MEM, 0)
            if mem <= 0:
                continue
            key = p["metadata"]["namespace"] + "/" + p["metadata"]["name"]
            ann = p["metadata"].get("annotations") or {}
            idx = ann.get("ALIYUN_COM_GPU_MEM_IDX")
            want = {"ALIYUN_COM_GPU_MEM_POD": str(int(mem)), "ALIYUN_COM_GPU_MEM_DEV": str(per_dev),
                    "ALIYUN_COM_GPU_MEM_ASSIGNED": "false"}
            for a, v in want.items():
                if ann.get(a) != v:
                    bad.append(f"pod {key}: annotation {a} = {ann.get(a)!r}, want {v!r}")
            t = ann.get("ALIYUN_COM_GPU_MEM_ASSUME_TIME", "")
            if not t.isdigit() or abs(int(t) - now_ns) > 3600e9:
                bad.append(f"pod {key}: ALIYUN_COM_GPU_MEM_ASSUME_TIME {t!r} is not Unix ns of the last hour")
            if idx is None or not idx.isdigit() or int(idx) >= count:
                bad.append(f"pod {key}: ALIYUN_COM_GPU_MEM_IDX {idx!r} is no device of {name} "
                           f"({COUNT} {count})")
                continue
            dev_used[int(idx)] = dev_used.get(int(idx), 0) + int(mem)
        for d, u in sorted(dev_used.items()):
            if u > per_dev:
                bad.append(f"node {name}: GPU {d} holds {MEM} {u} > its {per_dev}")
        # Replicas: the device plugin picks them.
        if int(labels.get("nvidia.com/gpu.replicas", "1") or 1) > 1:
            for p in on:
                if "kube-batchd.io/gpu-devices" in (p["metadata"].get("annotations") or {}):
                    bad.append(f"pod {p['metadata']['name']} on time-sliced node {name} "
                               "carries kube-batchd.io/gpu-devices")
        # Arena's view.
        if any(labels.get(k) == v for k, v in ARENA_SHARE_LABELS):
            total_gpus = int(cap.get(COUNT, 0))
            total_mem = cap.get(MEM, 0)
            dev_total = total_mem / total_gpus if total_gpus else 0
            devs = {}
            for p in on:
                for gid, m in arena_allocation(p).items():
                    devs[gid] = devs.get(gid, 0) + m
            asked = sum(arena_limits_in_pod(p, MEM) for p in on)
            print(f"arena top node -d {name}: GPU mode share, TotalGPUs {total_gpus}, "
                  f"TotalMemory(GiB) {total_mem:g}, AllocatedGPUs {len(devs)}, "
                  f"AllocatedMemory(GiB) {sum(devs.values())}")
            for gid in sorted(devs):
                pct = 100.0 * devs[gid] / dev_total if dev_total else 0
                print(f"  GPU{gid}: {devs[gid]}/{dev_total:g} GiB ({pct:.1f}%)")
                if not gid.isdigit() or int(gid) >= total_gpus:
                    bad.append(f"arena: node {name} has a pod on GPU {gid!r}, which it does not list")
                elif devs[gid] > dev_total:
                    bad.append(f"arena: node {name} GPU{gid} at {pct:.1f}%")
            if sum(devs.values()) != asked:
                bad.append(f"arena: node {name} shows {sum(devs.values())} GiB allocated, "
                           f"its pods ask {asked} (a pod without ALIYUN_COM_GPU_MEM_IDX is invisible)")
        elif alloc.get(GPU, 0) > 0:
            total = int(cap.get(GPU, 0))
            used_gpus = sum(arena_limits_in_pod(p, GPU) for p in on)
            print(f"arena top node -d {name}: GPU mode exclusive, TotalGPUs {total}, UsedGPUs {used_gpus}/{total}")
            if used_gpus > total:
                bad.append(f"arena: node {name} UsedGPUs {used_gpus}/{total}")
    for b in bad:
        print("BROKEN: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
