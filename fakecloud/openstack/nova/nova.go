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

// Package nova is fakecloud's Nova, the compute API v2.1 (and the one
// list of Glance's that the OpenStack CCM reads): the cloud's live
// instances as servers, their flavors and zones, and the inspector's power
// actions. It is a front over package model, separate from the other
// OpenStack services as the real ones are; what they share is in
// openstackjson.
package nova

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/fakecloud/model"
	"sigs.k8s.io/ccm-harness/fakecloud/openstack/openstackjson"
)

// Front is Nova, the compute API v2.1, over the cloud.
type Front struct{ *model.Cloud }

// New is Nova over cloud.
func New(cloud *model.Cloud) *Front { return &Front{cloud} }

var (
	// Nova names the body after the fault: itemNotFound, badRequest, ...
	computeError openstackjson.Dialect = func(status int, msg string) any {
		return map[string]any{openstackjson.StatusName(novaFaults, status, "computeFault"): map[string]any{"code": status, "message": msg}}
	}
	imageError openstackjson.Dialect = func(status int, msg string) any {
		return fmt.Sprintf("%d %s\n\n%s\n\n   ", status, http.StatusText(status), msg)
	}
)

// novaFaults names an error status as Nova does.
var novaFaults = map[int]string{
	http.StatusBadRequest: "badRequest", http.StatusForbidden: "forbidden",
	http.StatusNotFound: "itemNotFound", http.StatusConflict: "conflictingRequest",
	http.StatusTooManyRequests: "overLimit", http.StatusNotImplemented: "notImplemented",
	http.StatusServiceUnavailable: "serviceUnavailable",
}

// Register adds Nova's routes, and the image list of Glance that the
// OpenStack CCM reads.
func (s *Front) Register(r openstackjson.Router) {
	// Each service's version document needs no token, as in OpenStack;
	// clients read it before their first call.
	r.Open("GET "+openstackjson.Compute+"/{$}", "", openstackjson.Versions("v2.1", "2.1", openstackjson.Compute+"/v2.1/"))
	r.Open("GET "+openstackjson.Image+"/{$}", "", openstackjson.Versions("v2.16", "", openstackjson.Image+"/v2/"))
	r.Handle("GET "+openstackjson.Compute+"/v2.1/servers/detail", computeError, api.OpListInstances, s.novaListServers)
	r.Handle("GET "+openstackjson.Compute+"/v2.1/servers", computeError, api.OpListInstances, s.novaListServers)
	r.Handle("GET "+openstackjson.Compute+"/v2.1/servers/{id}", computeError, api.OpGetInstance, s.novaGetServer)
	// The inspector's power actions; the CCM makes none.
	r.Handle("POST "+openstackjson.Compute+"/v2.1/servers/{id}/action", computeError, "", s.novaServerAction)
	r.Handle("DELETE "+openstackjson.Compute+"/v2.1/servers/{id}", computeError, "", s.novaDeleteServer)
	r.Handle("GET "+openstackjson.Compute+"/v2.1/flavors", computeError, "", s.novaListFlavors)
	r.Handle("GET "+openstackjson.Compute+"/v2.1/flavors/detail", computeError, "", s.novaListFlavors)
	r.Handle("GET "+openstackjson.Compute+"/v2.1/flavors/{id}", computeError, "", s.novaGetFlavor)
	r.Handle("GET "+openstackjson.Compute+"/v2.1/flavors/{id}/os-extra_specs", computeError, "", novaFlavorExtraSpecs)
	r.Handle("GET "+openstackjson.Compute+"/v2.1/os-availability-zone", computeError, "", s.novaAvailabilityZones)
	r.Handle("GET "+openstackjson.Compute+"/v2.1/os-availability-zone/detail", computeError, "", s.novaAvailabilityZonesDetail)
	r.Handle("GET "+openstackjson.Compute+"/v2.1/{$}", computeError, "", s.novaVersion)
	// What fakecloud does not emulate answers as the service does for a
	// path it has no route for: 404 in its shape, after authentication.
	r.Handle(openstackjson.Compute+"/", computeError, "", openstackjson.NotFound(computeError))
	r.Handle("GET "+openstackjson.Image+"/v2/images", imageError, "", glanceListImages)
	r.Handle(openstackjson.Image+"/", imageError, "", openstackjson.NotFound(imageError))
}

// Nova, compute API v2.1 without a microversion: servers are the
// instances that are not terminated (Nova lists no deleted server and
// answers 404 for one), their flavor is named for the instance type.

// osServer is a Nova server as the v2.1 API shows it.
type osServer struct {
	ID               string                 `json:"id"`
	Name             string                 `json:"name"`
	Status           string                 `json:"status"`
	TenantID         string                 `json:"tenant_id"`
	UserID           string                 `json:"user_id"`
	HostID           string                 `json:"hostId"`
	Created          string                 `json:"created"`
	Updated          string                 `json:"updated"`
	AccessIPv4       string                 `json:"accessIPv4"`
	AccessIPv6       string                 `json:"accessIPv6"`
	Addresses        map[string][]osAddress `json:"addresses"`
	Flavor           osLinkRef              `json:"flavor"`
	Image            string                 `json:"image"`
	Metadata         map[string]string      `json:"metadata"`
	Links            []openstackjson.Link   `json:"links"`
	KeyName          *string                `json:"key_name"`
	SecurityGroups   []map[string]string    `json:"security_groups"`
	AvailabilityZone string                 `json:"OS-EXT-AZ:availability_zone"`
	VMState          string                 `json:"OS-EXT-STS:vm_state"`
	PowerState       int                    `json:"OS-EXT-STS:power_state"`
	TaskState        *string                `json:"OS-EXT-STS:task_state"`
	DiskConfig       string                 `json:"OS-DCF:diskConfig"`
	Progress         int                    `json:"progress"`
	ConfigDrive      string                 `json:"config_drive"`
}

type osAddress struct {
	Addr    string `json:"addr"`
	Version int    `json:"version"`
	Type    string `json:"OS-EXT-IPS:type"`
	MAC     string `json:"OS-EXT-IPS-MAC:mac_addr"`
}

type osLinkRef struct {
	ID    string               `json:"id"`
	Links []openstackjson.Link `json:"links"`
}

// flavorID names a flavor after the instance type, reversibly, and
// unlike the name: a CCM that reports the id for the name is caught.
func flavorID(instanceType string) string {
	return "flavor-" + hex.EncodeToString([]byte(instanceType))
}

func flavorName(id string) (string, bool) {
	if len(id) <= len("flavor-") || id[:len("flavor-")] != "flavor-" {
		return "", false
	}
	b, err := hex.DecodeString(id[len("flavor-"):])
	return string(b), err == nil
}

func novaServer(inst api.Instance, base string) osServer {
	status, vmState, power := "ACTIVE", "active", 1
	if inst.State == api.StateStopped {
		status, vmState, power = "SHUTOFF", "stopped", 4
	}
	mac := model.MAC(inst.ID)
	out := osServer{
		ID: inst.ID, Name: inst.Name, Status: status,
		TenantID: openstackjson.ProjectID, UserID: openstackjson.UserID,
		HostID:    fmt.Sprintf("%x", sha256.Sum224([]byte(openstackjson.ProjectID+inst.Zone))),
		Created:   inst.CreatedAt.UTC().Format(time.RFC3339),
		Updated:   inst.CreatedAt.UTC().Format(time.RFC3339),
		Addresses: map[string][]osAddress{},
		Flavor: osLinkRef{ID: flavorID(inst.InstanceType), Links: []openstackjson.Link{{Rel: "bookmark",
			Href: base + openstackjson.Compute + "/flavors/" + flavorID(inst.InstanceType)}}},
		Metadata: map[string]string{},
		Links: []openstackjson.Link{{Rel: "self", Href: base + openstackjson.Compute + "/v2.1/servers/" + inst.ID},
			{Rel: "bookmark", Href: base + openstackjson.Compute + "/servers/" + inst.ID}},
		SecurityGroups:   []map[string]string{{"name": "default"}},
		AvailabilityZone: inst.Zone,
		VMState:          vmState,
		PowerState:       power,
		DiskConfig:       "MANUAL",
	}
	for _, a := range inst.Addresses {
		switch a.Type {
		case api.AddressInternalIP:
			out.Addresses[openstackjson.NetworkName] = append(out.Addresses[openstackjson.NetworkName], osAddress{Addr: a.Address, Version: openstackjson.IPVersion(a.Address), Type: "fixed", MAC: mac})
		case api.AddressExternalIP:
			out.Addresses[openstackjson.NetworkName] = append(out.Addresses[openstackjson.NetworkName], osAddress{Addr: a.Address, Version: openstackjson.IPVersion(a.Address), Type: "floating", MAC: mac})
		case api.AddressHostname:
			// The OpenStack CCM reports a server's "hostname" metadata
			// as its Hostname address.
			out.Metadata["hostname"] = a.Address
		}
	}
	return out
}

func (s *Front) novaListServers(w http.ResponseWriter, r *http.Request, c *model.Call) {
	q, ok := openstackjson.Query(w, r, computeError, "name")
	if !ok {
		return
	}
	// Nova's name filter is a regular expression, searched for.
	var name *regexp.Regexp
	if q["name"] != "" {
		var err error
		if name, err = regexp.Compile(q["name"]); err != nil {
			computeError.WriteError(w, http.StatusBadRequest, fmt.Sprintf("Invalid input for query parameter name: %v", err))
			return
		}
		c.Instance = q["name"]
	}
	insts, f, ok := s.ListLiveInstances(w, r, c, func(inst api.Instance) bool { return name == nil || name.MatchString(inst.Name) })
	if !ok {
		return
	}
	out := []osServer{}
	for _, inst := range insts {
		model.CorruptInstance(f, &inst)
		out = append(out, novaServer(inst, openstackjson.BaseURL(r)))
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"servers": out})
}

func (s *Front) novaGetServer(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	c.Instance = id
	about := s.AboutServer(id)
	f, ok := s.ApplyFault(w, r, c, api.OpGetInstance, func(ref string) bool { return ref == id || about(ref) })
	if !ok {
		return
	}
	inst := s.LiveInstance(id)
	if inst == nil {
		computeError.WriteError(w, http.StatusNotFound, fmt.Sprintf("Instance %s could not be found.", id))
		return
	}
	model.CorruptInstance(f, inst)
	model.WriteJSON(w, http.StatusOK, map[string]any{"server": novaServer(*inst, openstackjson.BaseURL(r))})
}

// novaGetFlavor answers the flavor an id names. fakecloud's instance
// types have a name only, so every flavor reports the same sizes.
func (s *Front) novaGetFlavor(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	name, ok := flavorName(id)
	if !ok {
		computeError.WriteError(w, http.StatusNotFound, fmt.Sprintf("Flavor %s could not be found.", id))
		return
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"flavor": flavorWire(openstackjson.BaseURL(r), id, name)})
}

func flavorWire(base, id, name string) map[string]any {
	return map[string]any{
		"id": id, "name": name, "ram": 4096, "vcpus": 2, "disk": 20, "swap": "",
		"OS-FLV-EXT-DATA:ephemeral": 0, "OS-FLV-DISABLED:disabled": false,
		"rxtx_factor": 1.0, "os-flavor-access:is_public": true,
		"links": []openstackjson.Link{{Rel: "self", Href: base + openstackjson.Compute + "/v2.1/flavors/" + id}},
	}
}

// novaListFlavors lists a flavor for each instance type an instance has,
// and the default one (GET /flavors and /flavors/detail, which the
// openstack CLI's flavor list reads); all are public.
func (s *Front) novaListFlavors(w http.ResponseWriter, r *http.Request, c *model.Call) {
	q, ok := openstackjson.Query(w, r, computeError, "is_public")
	if !ok {
		return
	}
	if v := q["is_public"]; v != "" && !slices.Contains([]string{"true", "True", "1", "none", "None"}, v) {
		model.WriteJSON(w, http.StatusOK, map[string]any{"flavors": []any{}})
		return
	}
	types := []string{model.DefaultInstanceType}
	for _, inst := range s.LiveInstances() {
		if !slices.Contains(types, inst.InstanceType) {
			types = append(types, inst.InstanceType)
		}
	}
	slices.Sort(types)
	out := []map[string]any{}
	for _, t := range types {
		out = append(out, flavorWire(openstackjson.BaseURL(r), flavorID(t), t))
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"flavors": out})
}

// novaFlavorExtraSpecs answers a flavor's extra specs: fakecloud's
// flavors have none.
func novaFlavorExtraSpecs(w http.ResponseWriter, r *http.Request, c *model.Call) {
	if _, ok := flavorName(r.PathValue("id")); !ok {
		computeError.WriteError(w, http.StatusNotFound, fmt.Sprintf("Flavor %s could not be found.", r.PathValue("id")))
		return
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"extra_specs": map[string]string{}})
}

// novaAvailabilityZonesDetail is what Nova answers a project member who
// asks for the zones with their hosts: its policy allows that to admins
// only. The openstack CLI then asks for the zones alone.
func (s *Front) novaAvailabilityZonesDetail(w http.ResponseWriter, r *http.Request, c *model.Call) {
	computeError.WriteError(w, http.StatusForbidden, "Policy doesn't allow os_compute_api:os-availability-zone:detail to be performed.")
}

func (s *Front) novaAvailabilityZones(w http.ResponseWriter, r *http.Request, c *model.Call) {
	out := []map[string]any{}
	for _, z := range s.Zones() {
		out = append(out, map[string]any{"zoneName": z, "zoneState": map[string]bool{"available": true}, "hosts": nil})
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"availabilityZoneInfo": out})
}

func (s *Front) novaVersion(w http.ResponseWriter, r *http.Request, c *model.Call) {
	model.WriteJSON(w, http.StatusOK, map[string]any{"version": map[string]any{
		"id": "v2.1", "status": "CURRENT", "version": "2.1", "min_version": "2.1",
		"updated": "2013-07-23T11:33:21Z",
		"links":   []openstackjson.Link{{Rel: "self", Href: openstackjson.BaseURL(r) + openstackjson.Compute + "/v2.1/"}},
	}})
}

// glanceListImages lists no image: fakecloud's servers boot from no
// image it knows (their image is ""). Glance is in the catalog because
// clients need its endpoint before they list servers (the openstack CLI
// looks image names up there).
func glanceListImages(w http.ResponseWriter, r *http.Request, c *model.Call) {
	if _, ok := openstackjson.Query(w, r, imageError, "limit", "marker", "sort_key", "sort_dir", "sort", "visibility", "name", "status", "owner", "member_status"); !ok {
		return
	}
	model.WriteJSON(w, http.StatusOK, map[string]any{"images": []any{}, "first": "/v2/images", "schema": "/v2/schemas/images"})
}

// novaServerAction answers the server actions the harness's inspector
// makes, os-stop and os-start (POST /servers/{id}/action): 202 with no
// body, as Nova answers before the server has changed (fakecloud's has
// changed already); 409 for a server not in a state to take the action,
// 404 for a deleted one, 400 for any other action.
func (s *Front) novaServerAction(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	c.Instance = id
	var body map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body) != 1 {
		computeError.WriteError(w, http.StatusBadRequest, "Malformed request body")
		return
	}
	var action string
	for k := range body {
		action = k
	}
	var to api.InstanceState
	var verb string
	switch action {
	case "os-stop":
		to, verb = api.StateStopped, "stop"
	case "os-start":
		to, verb = api.StateRunning, "start"
	default:
		computeError.WriteError(w, http.StatusBadRequest, fmt.Sprintf("There is no such action: %s (fakecloud emulates os-stop and os-start)", action))
		return
	}
	if err := s.SetServerState(id, to); err != nil {
		// A conflict is a server already in state to.
		novaStateFailed(w, err, id, fmt.Sprintf("Cannot '%s' instance %s while it is in vm_state %s", verb, id, novaVMState(to)))
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// novaVMState is Nova's vm_state of a live instance.
func novaVMState(st api.InstanceState) string {
	if st == api.StateStopped {
		return "stopped"
	}
	return "active"
}

// novaDeleteServer deletes a server (DELETE /servers/{id}): 204, and
// from then on Nova lists it no more and answers 404 for it, as for one
// it never had.
func (s *Front) novaDeleteServer(w http.ResponseWriter, r *http.Request, c *model.Call) {
	id := r.PathValue("id")
	c.Instance = id
	// A live server is never terminated already: no conflict here.
	if err := s.SetServerState(id, api.StateTerminated); err != nil {
		novaStateFailed(w, err, id, "")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// novaStateFailed answers a refused change of server id's state in Nova's
// words: 404 for a server it does not have, 409 with conflict for one
// already in the state asked, and a failed state write as every front
// answers one.
func novaStateFailed(w http.ResponseWriter, err error, id, conflict string) {
	switch model.KindOf(err) {
	case model.KindNotFound:
		computeError.WriteError(w, http.StatusNotFound, fmt.Sprintf("Instance %s could not be found.", id))
	case model.KindConflict:
		computeError.WriteError(w, http.StatusConflict, conflict)
	default:
		model.SaveFailed(w, err)
	}
}
