package main

import (
	"strings"
	"testing"
)

func pod(t float64, name, uid, node, group string) Record {
	return Record{T: t, Kind: "Pod", Type: "MODIFIED", Name: name, UID: uid, Node: node, Group: group}
}

// A gang left at 1 of 2 for 3 s after the fault cleared is a violation; the
// same gang made whole within the period is not.
func TestPartialGangPastThePeriod(t *testing.T) {
	pg := Record{T: 0, Kind: "PodGroup", Type: "ADDED", Name: "g", Min: 2}
	partial := []Record{pg, pod(1, "g-0", "u0", "n1", "g"), pod(1, "g-1", "u1", "", "g"), pod(5, "g-1", "u1", "n1", "g")}
	var out strings.Builder
	if check(&out, partial, 2, 1, 0) != 1 || !strings.Contains(out.String(), "ran below minMember 2 for 3.00s") {
		t.Fatalf("partial gang not caught:\n%s", out.String())
	}
	whole := []Record{pg, pod(1, "g-0", "u0", "n1", "g"), pod(1, "g-1", "u1", "", "g"), pod(2.5, "g-1", "u1", "n1", "g")}
	out.Reset()
	if check(&out, whole, 2, 1, 0) != 0 {
		t.Fatalf("a gang whole within the period was judged bad:\n%s", out.String())
	}
}

// -until cuts the record: what comes after (here the gang made whole at 9)
// is left out, and the stretch still open at the cut runs to the cut (from
// the clear at 1 to 4: 3 s), not to the last record kept (1: none).
func TestPartialGangOpenUntilTheCut(t *testing.T) {
	pg := Record{T: 0, Kind: "PodGroup", Type: "ADDED", Name: "g", Min: 2}
	recs := []Record{pg, pod(1, "g-0", "u0", "n1", "g"), pod(1, "g-1", "u1", "", "g"), pod(9, "g-1", "u1", "n1", "g")}
	var out strings.Builder
	if check(&out, recs, 1, 1, 4) != 1 || !strings.Contains(out.String(), "ran below minMember 2 for 3.00s") {
		t.Fatalf("a gang partial until the cut not caught:\n%s", out.String())
	}
}

func TestBoundTwiceAndPendingWithoutReason(t *testing.T) {
	recs := []Record{pod(1, "a", "u", "n1", ""), pod(2, "a", "u", "n2", ""), pod(3, "b", "v", "", "")}
	var out strings.Builder
	if check(&out, recs, 0, 1, 0) != 1 {
		t.Fatal("expected violations")
	}
	s := out.String()
	if !strings.Contains(s, "pod a (uid u) bound to n2 after [n1]") || !strings.Contains(s, "pod b is pending without a reason") {
		t.Fatalf("missing findings:\n%s", s)
	}
}

func TestBoundToCordonedNode(t *testing.T) {
	recs := []Record{{T: 0, Kind: "Node", Type: "ADDED", Name: "n1", Cordoned: true}, pod(3, "a", "u", "n1", "")}
	var out strings.Builder
	if check(&out, recs, 0, 1, 0) != 1 || !strings.Contains(out.String(), "after the node was cordoned") {
		t.Fatalf("cordoned bind not caught:\n%s", out.String())
	}
}
