// Package audit reads what the API server refused a CCM's ServiceAccount
// from its audit log: the RBAC the provider's manifests lack, the most
// common way a CCM release breaks. A runtime that runs the API server
// gives it Policy and a log file; the suite reads the refusals a spec met
// into its failure and the run's into its summary.
package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// LogName is the audit log's file name in the cluster's log folder, and
// RefusalsFile the suite's account of a run's refusals in $ARTIFACTS.
const (
	LogName      = "kube-apiserver-audit.log"
	RefusalsFile = "rbac-refusals.txt"
)

// Policy logs, at Metadata level, every request of a ServiceAccount once
// it is answered: who, what, and the response code, which is all a
// refusal needs. Everything else is left out.
const Policy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts"]
- level: None
`

// decisionAnnotation is the authorizer's decision on an audited request.
const decisionAnnotation = "authorization.k8s.io/decision"

// Refusal is a request the API server answered 403 Forbidden.
type Refusal struct {
	Verb, APIGroup, Resource, Subresource, Namespace string
	// Count is how many such requests were refused, First when.
	Count int
	First time.Time
}

// ResourceName is the resource as an RBAC rule names it: nodes/status.
func (r Refusal) ResourceName() string {
	if r.Subresource != "" {
		return r.Resource + "/" + r.Subresource
	}
	return r.Resource
}

// Rule is the RBAC rule that would allow the request, as YAML in flow
// style: what to add to the provider's ClusterRole (or, for a namespaced
// request, a Role in that namespace).
func (r Refusal) Rule() string {
	return fmt.Sprintf(`{apiGroups: [%q], resources: [%q], verbs: [%q]}`, r.APIGroup, r.ResourceName(), r.Verb)
}

// String says what was refused and what would allow it.
func (r Refusal) String() string {
	where := ""
	if r.Namespace != "" {
		where = " in namespace " + r.Namespace
	}
	return fmt.Sprintf("%s %s%s refused %d× (rule that allows it: %s)", r.Verb, r.ResourceName(), where, r.Count, r.Rule())
}

// Username is how a ServiceAccount is named in the API's user info.
func Username(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// Refusals reads the audit log at path and returns the requests of user
// refused at or after since, grouped by verb, resource and namespace, in
// the order first refused.
func Refusals(path, user string, since time.Time) ([]Refusal, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	byKey := map[string]*Refusal{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		// Cheap tests before the parse: most lines are allowed requests.
		if !strings.Contains(string(line), `"code":403`) {
			continue
		}
		var e auditv1.Event
		if err := json.Unmarshal(line, &e); err != nil {
			continue // a line cut short by a log being written
		}
		// Only the authorizer's refusals: admission answers 403 too (a
		// namespace being deleted), and no rule would change that.
		if e.User.Username != user || e.ResponseStatus == nil || e.ResponseStatus.Code != 403 || e.ObjectRef == nil ||
			e.Annotations[decisionAnnotation] != "forbid" {
			continue
		}
		at := e.StageTimestamp.Time
		if at.Before(since) {
			continue
		}
		o := e.ObjectRef
		key := strings.Join([]string{e.Verb, o.APIGroup, o.Resource, o.Subresource, o.Namespace}, "|")
		r := byKey[key]
		if r == nil {
			r = &Refusal{Verb: e.Verb, APIGroup: o.APIGroup, Resource: o.Resource, Subresource: o.Subresource, Namespace: o.Namespace, First: at}
			byKey[key] = r
		}
		r.Count++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit log %s: %w", path, err)
	}
	out := make([]Refusal, 0, len(byKey))
	for _, r := range byKey {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].First.Before(out[j].First) })
	return out, nil
}

// Explain is the refusals as lines for a failure or a summary, "" if
// there are none.
func Explain(user string, rs []Refusal) string {
	if len(rs) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "RBAC: the API server refused the CCM's ServiceAccount (%s) %d kind(s) of request; its manifests lack the rules:\n", user, len(rs))
	for _, r := range rs {
		fmt.Fprintf(&b, "  %s\n", r)
	}
	return b.String()
}

// Log is a cluster's audit log and the ServiceAccount its CCM runs as,
// known once the CCM starts; until then it has no refusals to tell.
type Log struct {
	mu         sync.Mutex
	path, user string
}

// Set names the log and the CCM's ServiceAccount.
func (l *Log) Set(path, namespace, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.path, l.user = path, Username(namespace, name)
}

// Refusals are the CCM's refusals since a time, and its user name; none
// before Set. It fits cluster.Cluster's Refusals.
func (l *Log) Refusals(since time.Time) (string, []Refusal, error) {
	l.mu.Lock()
	path, user := l.path, l.user
	l.mu.Unlock()
	if user == "" {
		return "", nil, nil
	}
	rs, err := Refusals(path, user, since)
	return user, rs, err
}
