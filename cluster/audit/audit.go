/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package audit reads a CCM's requests from the API server's audit log:
// what it refused the CCM's ServiceAccount (the RBAC the provider's
// manifests lack, the most common way a CCM release breaks), and the
// deprecated or removed APIs the CCM called (how a CCM of one minor breaks
// against the next). A runtime that runs the API server gives it Policy
// and a log file; the suite reads the refusals a spec met into its failure
// and the run's refusals and API uses into its summary.
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
	// APIUsesFile is the suite's account of the deprecated and removed
	// APIs the CCM called, in $ARTIFACTS; the matrix lists it per cell.
	APIUsesFile = "deprecated-apis.txt"
)

// Policy logs, at Metadata level, every request of a ServiceAccount, and
// of the user a CCM binary authenticates as (CCMUser), once it is
// answered: who, what, the response code and the deprecation annotations,
// which is all a refusal or an API use needs. Everything else is left out.
const Policy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts"]
- level: Metadata
  users: ["` + CCMUser + `"]
- level: None
`

// CCMUser is the user a CCM binary the harness runs authenticates as.
const CCMUser = "system:cloud-controller-manager"

// The annotations the API server puts on a request to a deprecated API.
const (
	deprecatedAnnotation = "k8s.io/deprecated"
	removedAnnotation    = "k8s.io/removed-release"
)

// APIUse is the CCM's requests to an API the server deprecates, or no
// longer serves, of one verb and resource.
type APIUse struct {
	Verb, APIGroup, APIVersion, Resource, Subresource string
	// Removed is the release that removes a deprecated API, "" if the
	// server names none.
	Removed string
	// Gone: the server does not serve the API (a collection request
	// answered 404 Not Found): removed, or never there.
	Gone bool
	// Count is how many such requests, First when.
	Count int
	First time.Time
}

func (u APIUse) String() string {
	gv := u.APIVersion
	if u.APIGroup != "" {
		gv = u.APIGroup + "/" + u.APIVersion
	}
	res := u.Resource
	if u.Subresource != "" {
		res += "/" + u.Subresource
	}
	what := "deprecated"
	switch {
	case u.Gone:
		what = "not served (404): removed from this release, or never in it"
	case u.Removed != "":
		what = "deprecated, removed in " + u.Removed
	}
	return fmt.Sprintf("%s %s (%s): %s; %d requests, the first at %s", u.Verb, res, gv, what, u.Count, u.First.UTC().Format(time.RFC3339))
}

// APIUses reads the audit log at path and returns user's requests since
// a time to deprecated APIs, and its collection requests the server
// answered 404 (an API it does not serve), in the order first made.
func APIUses(path, user string, since time.Time) ([]APIUse, error) {
	byKey := map[string]*APIUse{}
	err := eachEvent(path, func(line string) bool {
		return strings.Contains(line, deprecatedAnnotation) || strings.Contains(line, `"code":404`)
	}, func(e *auditv1.Event) {
		if e.User.Username != user || e.ObjectRef == nil || e.StageTimestamp.Time.Before(since) {
			return
		}
		deprecated := e.Annotations[deprecatedAnnotation] == "true"
		// A get of a missing object is 404 too; a list or watch is 404
		// only when the resource itself is not served.
		gone := e.ResponseStatus != nil && e.ResponseStatus.Code == 404 && (e.Verb == "list" || e.Verb == "watch")
		if !deprecated && !gone {
			return
		}
		o := e.ObjectRef
		key := strings.Join([]string{e.Verb, o.APIGroup, o.APIVersion, o.Resource, o.Subresource}, "|")
		u := byKey[key]
		if u == nil {
			u = &APIUse{Verb: e.Verb, APIGroup: o.APIGroup, APIVersion: o.APIVersion, Resource: o.Resource, Subresource: o.Subresource,
				Removed: e.Annotations[removedAnnotation], Gone: gone, First: e.StageTimestamp.Time}
			byKey[key] = u
		}
		u.Count++
	})
	if err != nil {
		return nil, err
	}
	out := make([]APIUse, 0, len(byKey))
	for _, u := range byKey {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].First.Before(out[j].First) })
	return out, nil
}

// eachEvent calls fn with each event of the audit log at path whose line
// passes cheap, a test before the parse; a line cut short by a log being
// written is passed over.
func eachEvent(path string, cheap func(line string) bool, fn func(*auditv1.Event)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if !cheap(string(sc.Bytes())) {
			continue
		}
		var e auditv1.Event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		fn(&e)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("audit log %s: %w", path, err)
	}
	return nil
}

// ExplainAPIUses is the uses as lines for a summary, "" if none.
func ExplainAPIUses(user string, us []APIUse) string {
	if len(us) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "APIs: the CCM (%s) called %d deprecated or unserved API(s):\n", user, len(us))
	for _, u := range us {
		fmt.Fprintf(&b, "  %s\n", u)
	}
	return b.String()
}

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
	byKey := map[string]*Refusal{}
	// Cheap test before the parse: most lines are allowed requests.
	err := eachEvent(path, func(line string) bool { return strings.Contains(line, `"code":403`) }, func(e *auditv1.Event) {
		// Only the authorizer's refusals: admission answers 403 too (a
		// namespace being deleted), and no rule would change that.
		if e.User.Username != user || e.ResponseStatus == nil || e.ResponseStatus.Code != 403 || e.ObjectRef == nil ||
			e.Annotations[decisionAnnotation] != "forbid" {
			return
		}
		at := e.StageTimestamp.Time
		if at.Before(since) {
			return
		}
		o := e.ObjectRef
		key := strings.Join([]string{e.Verb, o.APIGroup, o.Resource, o.Subresource, o.Namespace}, "|")
		r := byKey[key]
		if r == nil {
			r = &Refusal{Verb: e.Verb, APIGroup: o.APIGroup, Resource: o.Resource, Subresource: o.Subresource, Namespace: o.Namespace, First: at}
			byKey[key] = r
		}
		r.Count++
	})
	if err != nil {
		return nil, err
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

// Log is a cluster's audit log and the user its CCM runs as, known once
// the CCM starts; until then it has nothing to tell.
type Log struct {
	mu   sync.Mutex
	path string
	// user is the CCM's ServiceAccount, whose refusals are its
	// manifests' doing; binary the user of a CCM binary, which runs with
	// the harness's grants.
	user, binary string
}

// Set names the log and the CCM's ServiceAccount.
func (l *Log) Set(path, namespace, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.path, l.user = path, Username(namespace, name)
}

// SetBinary names the log and the user of a CCM binary: its API uses are
// told, but not its refusals, which no manifest of the provider's caused.
func (l *Log) SetBinary(path, user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.path, l.binary = path, user
}

// Source is what a Log knows, kept in a cluster's state so that another
// process (a parallel suite's) reads the same log as the same user.
type Source struct {
	Path   string `json:"path,omitempty"`
	User   string `json:"user,omitempty"`
	Binary string `json:"binary,omitempty"`
}

// Source is what l knows now.
func (l *Log) Source() Source {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Source{Path: l.path, User: l.user, Binary: l.binary}
}

// LogOf is the Log another process's l knew: src.
func LogOf(src Source) *Log { return &Log{path: src.Path, user: src.User, binary: src.Binary} }

// APIUses are the CCM's deprecated and unserved API calls since a time,
// and its user name; none before a Set.
func (l *Log) APIUses(since time.Time) (string, []APIUse, error) {
	l.mu.Lock()
	path, user := l.path, l.user
	if user == "" {
		user = l.binary
	}
	l.mu.Unlock()
	if user == "" {
		return "", nil, nil
	}
	us, err := APIUses(path, user, since)
	return user, us, err
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
