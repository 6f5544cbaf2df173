#!/usr/bin/env python3
"""Compares the simulator's outcome of a scenario with the cluster's.

    twin_compare.py [--any-node] SIM.json OBJS.json PODS.json NODES.json
    twin_compare.py --prepare OBJS.json PREFIX      (the files twin.sh creates
                                                     from: see prepare())

SIM.json: `kube-batchd simulate --output json`; OBJS.json: the scenario's
manifests as kubectl reads them (a List); PODS.json and NODES.json: `kubectl
get pods -A -o json` and `kubectl get nodes -o json` once the daemon settled.

Compared: the pods kube-batchd bound (pods the manifests bind themselves are
left aside), the pods of ours left pending, and the placements up to nodes
that are alike (same allocatable, labels but the hostname, kube-batchd.io/
annotations, taints and schedulability): each bound pod's node is of the
same class on both sides, and the pods share nodes alike (for each node,
its class and the pods on it, those the manifests placed included, form
the same multiset on both sides: one renaming of alike nodes explains every
placement). And the pods evicted: those the simulator evicts are those the
cluster deleted (gone from PODS.json, or being deleted); the cluster makes
no evicted pod again (no controller here), so the victims are left out of
the other comparisons on both sides (the simulator has them pending, or
binds them again). Exit 0 and one summary line when they agree; 1 and one
line per difference, with both outcomes, when not.
"""
import copy
import json
import sys

HOST_LABELS = {"kubernetes.io/hostname"}


def items(path):
    """The objects of a file of one JSON value (a List or an object) or of
    several in a row (kubectl's output for several documents)."""
    text, out, at = open(path).read(), [], 0
    dec = json.JSONDecoder()
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return out
        d, at = dec.raw_decode(text, at)
        out.extend(d.get("items", [d]) if d.get("kind", "").endswith("List") else [d])


ARRIVAL = "sim.kube-batchd.io/arrival"


def arrival(obj):
    """When the simulator adds obj, in seconds: a pod's arrival annotation,
    else 0 (everything else is there from the start)."""
    if obj["kind"] != "Pod":
        return 0.0
    return float((obj["metadata"].get("annotations") or {}).get(ARRIVAL) or 0)


def key(obj):
    m = obj["metadata"]
    return "%s/%s" % (m.get("namespace") or "default", m["name"])


def node_class(node):
    """What makes two nodes interchangeable for a placement."""
    labels = {k: v for k, v in node["metadata"].get("labels", {}).items() if k not in HOST_LABELS}
    # kube-batchd's own node annotations change placement (GPU topology
    # and models); those the API or kwok add do not.
    notes = {k: v for k, v in (node["metadata"].get("annotations") or {}).items()
             if k.startswith("kube-batchd.io/")}
    spec = node.get("spec", {})
    return json.dumps(
        {
            "allocatable": node.get("status", {}).get("allocatable", {}),
            "annotations": notes,
            "labels": labels,
            "taints": sorted(json.dumps(t, sort_keys=True) for t in spec.get("taints", [])),
            "unschedulable": bool(spec.get("unschedulable")),
        },
        sort_keys=True,
    )


def for_api(objs):
    """The scenario's objects as both sides get them, as YAML documents:
    documents the API accepts (the simulator needs no container image, nor
    limits for extended resources, which the API requires equal to the
    requests), without creationTimestamp (the API sets its own, to the
    second). Pods and PodGroups go last, in namespace/name order: the API's
    timestamps then grow with the order the simulator breaks ties in
    (namespace/name, all its objects created at once), even when the burst
    spans a second boundary. objs is left as it was (the objects are
    copied)."""
    objs = [copy.deepcopy(o) for o in objs if o["kind"] != "Namespace"]
    # Pods bound in the manifests are the cluster as it was: they come
    # before anything to schedule, so that a scheduler that places each
    # pod as it arrives (kube-scheduler) has them in its cache first.
    placed = [o for o in objs if o["kind"] == "Pod" and o.get("spec", {}).get("nodeName")]
    rest = [o for o in objs if o["kind"] not in ("Pod", "PodGroup")]
    work = sorted((o for o in objs if o["kind"] in ("Pod", "PodGroup") and o not in placed),
                  key=lambda o: (o["metadata"].get("namespace") or "default", o["metadata"]["name"]))
    out = []
    for o in rest + placed + work:
        o["metadata"].pop("creationTimestamp", None)
        if o["kind"] == "Node":
            # A kubelet always reports its pod capacity; a node written
            # without one has the kubelet's default (--max-pods 110), as
            # kube-batchd reads it (cache/objects.h). Without it the API's
            # node takes no pod at all for kube-scheduler.
            st = o.setdefault("status", {})
            for field in ("allocatable", "capacity"):
                if field in st or field == "allocatable":
                    st.setdefault(field, {}).setdefault("pods", "110")
        if o["kind"] == "Pod":
            for c in o["spec"].get("containers", []) + o["spec"].get("initContainers", []):
                c.setdefault("image", "registry.k8s.io/pause:3.9")
                res = c.get("resources") or {}
                for name, q in (res.get("requests") or {}).items():
                    if "/" in name and not name.startswith("kubernetes.io/"):
                        res.setdefault("limits", {}).setdefault(name, q)
        out.append("---\n%s\n" % json.dumps(o))
    return "".join(out)


def prepare(objs_path, prefix):
    """Writes what twin.sh needs of a scenario, each file PREFIX + suffix:
      .api.yaml       every object both sides get (for_api)
      .ns.yaml        its Namespace objects (their labels matter to
                      namespaceSelector), applied before the rest, since
                      Namespaces outlive a scenario here (no namespace
                      controller deletes them)
      .namespaces     the namespaces its objects are in, one line
      .waves          the arrivals after 0, in seconds, one line: the
                      cluster side creates the pods that arrive later in
                      waves, each once the one before has settled, as the
                      simulator adds them
      .wave-AT.yaml   for 0 and each wave: the objects arriving then
      .pg-statuses    "GROUP NAMESPACE NAME PATCH" per PodGroup whose
                      manifest has a status (a create drops it)
    One call rather than one per file: each python3 start costs."""
    objs = items(objs_path)

    def write(suffix, text):
        with open(prefix + suffix, "w") as f:
            f.write(text)

    write(".api.yaml", for_api(objs))
    write(".ns.yaml", "".join(
        "---\n%s\n" % json.dumps(dict(o, metadata={k: v for k, v in o["metadata"].items()
                                                   if k != "creationTimestamp"}))
        for o in objs if o["kind"] == "Namespace"))
    write(".namespaces", " ".join(sorted({o["metadata"]["namespace"] for o in objs
                                          if o["metadata"].get("namespace")})) + "\n")
    waves = sorted({arrival(o) for o in objs} - {0.0})
    write(".waves", " ".join("%g" % a for a in waves) + "\n")
    for at in [0.0] + waves:
        write(".wave-%g.yaml" % at,
              for_api([o for o in objs if arrival(o) == at]))
    write(".pg-statuses", "".join(
        "%s %s %s %s\n" % (o["apiVersion"].split("/")[0], o["metadata"].get("namespace") or "default",
                           o["metadata"]["name"], json.dumps({"status": o["status"]}, separators=(",", ":")))
        for o in objs if o["kind"] == "PodGroup" and o.get("status")))


def main():
    if sys.argv[1] == "--prepare":
        prepare(sys.argv[2], sys.argv[3])
        return 0
    # --any-node: the nodes are not compared, only what is bound and what
    # waits (kube-scheduler picks at random among nodes that score alike).
    any_node = sys.argv[1] == "--any-node"
    sim_path, objs_path, pods_path, nodes_path = sys.argv[2:6] if any_node else sys.argv[1:5]
    sim = json.load(open(sim_path))
    objs = items(objs_path)
    pods = items(pods_path)
    # Evicted: by the simulator, and on the cluster's side every pod of the
    # scenario the API no longer holds or is deleting.
    sim_evicted = {e["pod"] for e in sim.get("evictions", [])}
    alive = {key(p) for p in pods if not p["metadata"].get("deletionTimestamp")}
    cl_evicted = {key(o) for o in objs if o["kind"] == "Pod"} - alive
    evicted = sim_evicted | cl_evicted
    prebound = {key(o): o["spec"]["nodeName"] for o in objs
                if o["kind"] == "Pod" and o.get("spec", {}).get("nodeName") and key(o) not in evicted}
    classes = {n["metadata"]["name"]: node_class(n) for n in items(nodes_path)}
    names = {}  # class -> a short name for messages
    for n in sorted(classes):
        names.setdefault(classes[n], "class-%d(%s)" % (len(names) + 1, n))

    sim_bound = {}
    for b in sim["bindings"]:
        if b["pod"] not in evicted:
            sim_bound[b["pod"]] = b["node"]  # the last binding counts
    sim_pending = {p["pod"] if isinstance(p, dict) else p for p in sim["pending"]} - evicted

    cl_bound, cl_pending = {}, set()
    for p in pods:
        k = key(p)
        if k in prebound or k in evicted:
            continue
        node = p.get("spec", {}).get("nodeName")
        if node:
            cl_bound[k] = node
        elif p.get("spec", {}).get("schedulerName") == "kube-batchd" and not p.get("spec", {}).get(
            "schedulingGates"
        ):
            cl_pending.add(k)

    diffs = []
    for k in sorted(sim_evicted ^ cl_evicted):
        if k in sim_evicted:
            diffs.append("%s: the simulator evicted it; the cluster did not" % k)
        else:
            diffs.append("%s: the cluster deleted it; the simulator did not evict it" % k)
    for k in sorted(set(sim_bound) | set(cl_bound)):
        s, c = sim_bound.get(k), cl_bound.get(k)
        if s and not c:
            diffs.append("%s: the simulator bound it to %s; the cluster did not bind it" % (k, s))
        elif c and not s:
            diffs.append("%s: the cluster bound it to %s; the simulator did not bind it" % (k, c))
        elif not any_node and classes.get(s) != classes.get(c):
            diffs.append(
                "%s: the simulator chose %s (%s), the cluster %s (%s): nodes not alike"
                % (k, s, names.get(classes.get(s), "?"), c, names.get(classes.get(c), "?"))
            )
    # Sharing: a pack and a spread over alike nodes, or two pods swapped
    # between them, agree pod by pod on the class but not here.
    if not any_node and not diffs:
        def sharing(bound):
            on = {}
            for k, n in list(bound.items()) + list(prebound.items()):
                on.setdefault(n, []).append(k)
            return sorted((names.get(classes.get(n), "?"), sorted(ks)) for n, ks in on.items())
        s_share, c_share = sharing(sim_bound), sharing(cl_bound)
        if s_share != c_share:
            diffs.append("the pods share alike nodes differently (class, pods on one node):")
            for label, share in (("simulator", s_share), ("cluster", c_share)):
                diffs.append("  %s: %s" % (label, "; ".join("%s: %s" % (c, " ".join(ks)) for c, ks in share)))
    # Pending: ours that neither side bound must be pending on both.
    for k in sorted(sim_pending ^ cl_pending):
        if k in sim_bound or k in cl_bound:
            continue  # said above
        side = "the simulator" if k in sim_pending else "the cluster"
        diffs.append("%s: pending only in %s" % (k, side))
    if diffs:
        print("\n".join(diffs))
        print("simulator: bound %s; pending %s" % (json.dumps(sim_bound, sort_keys=True), sorted(sim_pending)))
        print("cluster:   bound %s; pending %s" % (json.dumps(cl_bound, sort_keys=True), sorted(cl_pending)))
        print("evicted:   by the simulator %s; by the cluster %s" % (sorted(sim_evicted), sorted(cl_evicted)))
        return 1
    gone = ", %d evicted" % len(sim_evicted) if sim_evicted else ""
    if any_node:
        print("%d bound and %d pending alike%s (nodes not compared)" % (len(sim_bound), len(sim_pending), gone))
    else:
        print("%d bound and %d pending alike%s (%d node classes)" % (len(sim_bound), len(sim_pending), gone,
                                                                   len(names)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
