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

// Package client is the Go client of the fakecloud API: Cloud for the cloud
// API a CCM uses, Admin for the admin API tests use to shape the cloud and
// read the truth about it.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// Timeout bounds every request, so a hung fakecloud fails a test instead of
// stalling it.
const Timeout = 10 * time.Second

// APIError is an error answer of the fakecloud API.
type APIError struct {
	Method, Path string
	Status       int
	Code         string
	Message      string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("fakecloud: %s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
}

// IsNotFound reports whether err is the API saying the thing does not exist:
// a 404, or a conditional change's 412 whose code says why.
func IsNotFound(err error) bool {
	var e *APIError
	return errors.As(err, &e) && (e.Status == http.StatusNotFound || e.Code == api.CodeNotFound)
}

// IsConflict reports whether err is the API refusing a change that clashes
// with what exists, such as a route name holding a different route.
func IsConflict(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == http.StatusConflict
}

// IsThrottled reports whether err is the API asking the caller to slow down.
func IsThrottled(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == http.StatusTooManyRequests
}

// doer is the request plumbing Cloud and Admin share.
type doer struct {
	endpoint string
	token    string
	http     *http.Client
}

func newDoer(endpoint, token string) doer {
	return doer{
		endpoint: strings.TrimRight(endpoint, "/"),
		token:    token,
		http:     &http.Client{Timeout: Timeout},
	}
}

// do sends in (if not nil) as JSON and decodes the answer into out (if not
// nil). Any non-2xx answer is an *APIError.
func (d doer) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	return d.doWith(ctx, method, path, query, nil, in, out)
}

// doWith is do with extra request headers.
func (d doer) doWith(ctx context.Context, method, path string, query url.Values, header http.Header, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("fakecloud: %s %s: encoding request: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	u := d.endpoint + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return fmt.Errorf("fakecloud: %s %s: %w", method, path, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if d.token != "" {
		req.Header.Set("Authorization", "Bearer "+d.token)
	}
	resp, err := d.http.Do(req)
	if err != nil {
		// url.Error would repeat the method and URL this message already has.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("fakecloud: %s %s: cannot reach %s: %w", method, path, d.endpoint, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("fakecloud: %s %s: reading response: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return apiError(method, path, resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("fakecloud: %s %s: decoding response: %w", method, path, err)
	}
	return nil
}

func apiError(method, path string, status int, body []byte) *APIError {
	e := &APIError{Method: method, Path: path, Status: status}
	var eb api.ErrorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error.Code != "" {
		e.Code, e.Message = eb.Error.Code, eb.Error.Message
		return e
	}
	// Not fakecloud's JSON: whatever answered, show what it said.
	e.Code = http.StatusText(status)
	e.Message = strings.TrimSpace(string(body))
	if len(e.Message) > 200 {
		e.Message = e.Message[:200] + "..."
	}
	return e
}

func (d doer) healthz(ctx context.Context) error {
	return d.do(ctx, http.MethodGet, api.PathHealthz, nil, nil, nil)
}

// Cloud is a client of the cloud API. It is safe for concurrent use.
type Cloud struct{ d doer }

// New returns a client of the cloud API at endpoint (e.g.
// "http://127.0.0.1:8080") authenticating with the cloud token.
func New(endpoint, token string) *Cloud { return &Cloud{d: newDoer(endpoint, token)} }

// ListInstances lists instances, terminated ones included, only those named
// name unless name is empty.
func (c *Cloud) ListInstances(ctx context.Context, name string) ([]api.Instance, error) {
	var q url.Values
	if name != "" {
		q = url.Values{"name": {name}}
	}
	var out api.InstanceList
	if err := c.d.do(ctx, http.MethodGet, api.PathInstances, q, nil, &out); err != nil {
		return nil, err
	}
	return out.Instances, nil
}

// GetInstance returns the instance with this ID; IsNotFound tells when there
// is none.
func (c *Cloud) GetInstance(ctx context.Context, id string) (*api.Instance, error) {
	var out api.Instance
	if err := c.d.do(ctx, http.MethodGet, api.PathInstance+url.PathEscape(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListLoadBalancers lists every load balancer.
func (c *Cloud) ListLoadBalancers(ctx context.Context) ([]api.LoadBalancer, error) {
	var out api.LoadBalancerList
	if err := c.d.do(ctx, http.MethodGet, api.PathLoadBalancers, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.LoadBalancers, nil
}

// GetLoadBalancer returns the load balancer named name; IsNotFound tells
// when there is none.
func (c *Cloud) GetLoadBalancer(ctx context.Context, name string) (*api.LoadBalancer, error) {
	var out api.LoadBalancer
	if err := c.d.do(ctx, http.MethodGet, api.PathLoadBalancer+url.PathEscape(name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// EnsureLoadBalancer creates the load balancer named name, or replaces its
// spec in place, keeping its ID and IP.
func (c *Cloud) EnsureLoadBalancer(ctx context.Context, name string, spec api.LoadBalancerSpec) (*api.LoadBalancer, error) {
	var out api.LoadBalancer
	if err := c.d.do(ctx, http.MethodPut, api.PathLoadBalancer+url.PathEscape(name), nil, spec, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateLoadBalancer replaces the spec of the load balancer named name
// only if it exists (HTTP's If-Match: *): in one step, so that an update
// racing the load balancer's deletion cannot bring it back. IsNotFound
// tells when there is none.
func (c *Cloud) UpdateLoadBalancer(ctx context.Context, name string, spec api.LoadBalancerSpec) (*api.LoadBalancer, error) {
	var out api.LoadBalancer
	if err := c.d.doWith(ctx, http.MethodPut, api.PathLoadBalancer+url.PathEscape(name), nil, http.Header{"If-Match": {"*"}}, spec, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteLoadBalancer deletes the load balancer named name; IsNotFound tells
// when there was none, which a caller may take as done.
func (c *Cloud) DeleteLoadBalancer(ctx context.Context, name string) error {
	return c.d.do(ctx, http.MethodDelete, api.PathLoadBalancer+url.PathEscape(name), nil, nil, nil)
}

// ListRoutes lists the routes of cluster, or every route if cluster is
// empty.
func (c *Cloud) ListRoutes(ctx context.Context, cluster string) ([]api.Route, error) {
	var q url.Values
	if cluster != "" {
		q = url.Values{"cluster": {cluster}}
	}
	var out api.RouteList
	if err := c.d.do(ctx, http.MethodGet, api.PathRoutes, q, nil, &out); err != nil {
		return nil, err
	}
	return out.Routes, nil
}

// CreateRoute creates the route named name. An identical route of that
// name is success; a different one is an error for which IsConflict is
// true.
func (c *Cloud) CreateRoute(ctx context.Context, name string, spec api.RouteSpec) (*api.Route, error) {
	var out api.Route
	if err := c.d.do(ctx, http.MethodPut, api.PathRoute+url.PathEscape(name), nil, spec, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteRoute deletes the route named name; IsNotFound tells when there was
// none.
func (c *Cloud) DeleteRoute(ctx context.Context, name string) error {
	return c.d.do(ctx, http.MethodDelete, api.PathRoute+url.PathEscape(name), nil, nil, nil)
}

// Healthz returns nil when fakecloud answers at all.
func (c *Cloud) Healthz(ctx context.Context) error { return c.d.healthz(ctx) }

// Admin is a client of the admin API. It is safe for concurrent use.
type Admin struct{ d doer }

// NewAdmin returns a client of the admin API at endpoint authenticating with
// the admin token.
func NewAdmin(endpoint, adminToken string) *Admin { return &Admin{d: newDoer(endpoint, adminToken)} }

// Healthz returns nil when fakecloud answers at all.
func (a *Admin) Healthz(ctx context.Context) error { return a.d.healthz(ctx) }

// CreateInstance creates a running instance; see api.CreateInstanceRequest
// for the defaults.
func (a *Admin) CreateInstance(ctx context.Context, req api.CreateInstanceRequest) (*api.Instance, error) {
	var out api.Instance
	if err := a.d.do(ctx, http.MethodPost, api.AdminPathInstances, nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Instances lists every instance as it truly is, faults notwithstanding.
func (a *Admin) Instances(ctx context.Context) ([]api.Instance, error) {
	var out api.InstanceList
	if err := a.d.do(ctx, http.MethodGet, api.AdminPathInstances, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Instances, nil
}

// Instance returns the instance with this ID or, failing that, the newest
// live instance of this name, failing that the newest of this name.
func (a *Admin) Instance(ctx context.Context, idOrName string) (*api.Instance, error) {
	return a.instance(ctx, http.MethodGet, idOrName, "")
}

// Stop stops an instance; stopping a stopped one is not an error.
func (a *Admin) Stop(ctx context.Context, idOrName string) (*api.Instance, error) {
	return a.instance(ctx, http.MethodPost, idOrName, "/stop")
}

// Start starts a stopped instance; a terminated one is a Conflict.
func (a *Admin) Start(ctx context.Context, idOrName string) (*api.Instance, error) {
	return a.instance(ctx, http.MethodPost, idOrName, "/start")
}

// Terminate terminates an instance for good; terminating twice is fine.
func (a *Admin) Terminate(ctx context.Context, idOrName string) (*api.Instance, error) {
	return a.instance(ctx, http.MethodPost, idOrName, "/terminate")
}

func (a *Admin) instance(ctx context.Context, method, idOrName, action string) (*api.Instance, error) {
	var out api.Instance
	if err := a.d.do(ctx, method, api.AdminPathInstance+url.PathEscape(idOrName)+action, nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// LoadBalancers lists every load balancer as it truly is, with the data
// plane's view of its backends.
func (a *Admin) LoadBalancers(ctx context.Context) ([]api.LoadBalancer, error) {
	var out api.LoadBalancerList
	if err := a.d.do(ctx, http.MethodGet, api.AdminPathLoadBalancers, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.LoadBalancers, nil
}

// LoadBalancer returns the load balancer with this name or, failing that,
// this ID.
func (a *Admin) LoadBalancer(ctx context.Context, nameOrID string) (*api.LoadBalancer, error) {
	var out api.LoadBalancer
	if err := a.d.do(ctx, http.MethodGet, api.AdminPathLoadBalancer+url.PathEscape(nameOrID), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Routes lists every route, of every cluster.
func (a *Admin) Routes(ctx context.Context) ([]api.Route, error) {
	var out api.RouteList
	if err := a.d.do(ctx, http.MethodGet, api.AdminPathRoutes, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Routes, nil
}

// DeleteRoute deletes a route behind the CCM's back.
func (a *Admin) DeleteRoute(ctx context.Context, name string) error {
	return a.d.do(ctx, http.MethodDelete, api.AdminPathRoute+url.PathEscape(name), nil, nil, nil)
}

// AddFault adds a fault and returns it with the ID the server gave it.
func (a *Admin) AddFault(ctx context.Context, f api.Fault) (*api.Fault, error) {
	var out api.Fault
	if err := a.d.do(ctx, http.MethodPost, api.AdminPathFaults, nil, f, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Faults lists the active faults, with what is left of their Count.
func (a *Admin) Faults(ctx context.Context) ([]api.Fault, error) {
	var out api.FaultList
	if err := a.d.do(ctx, http.MethodGet, api.AdminPathFaults, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Faults, nil
}

// DeleteFault removes one fault.
func (a *Admin) DeleteFault(ctx context.Context, id string) error {
	return a.d.do(ctx, http.MethodDelete, api.AdminPathFaults+"/"+url.PathEscape(id), nil, nil, nil)
}

// ClearFaults removes every fault.
func (a *Admin) ClearFaults(ctx context.Context) error {
	return a.d.do(ctx, http.MethodDelete, api.AdminPathFaults, nil, nil, nil)
}

// Audit returns the audit entries with Seq > since still held in memory.
func (a *Admin) Audit(ctx context.Context, since int64) ([]api.AuditEntry, error) {
	var q url.Values
	if since > 0 {
		q = url.Values{"since": {strconv.FormatInt(since, 10)}}
	}
	var out api.AuditLog
	if err := a.d.do(ctx, http.MethodGet, api.AdminPathAudit, q, nil, &out); err != nil {
		return nil, err
	}
	return out.Entries, nil
}
