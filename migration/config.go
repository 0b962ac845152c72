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

// Package migration watches a control plane move its cloud controllers
// between kube-controller-manager and a cloud-controller-manager under
// leader migration (KEP-2436): a recorder reads, from each manager
// process's log, when it starts each controller, and from the harness when
// it stops, and samples, about twice a second, which controllers each runs
// and who holds the leases; the timeline it keeps is checked for a
// controller running in two places at once for any time, a controller left
// without a manager for too long, and a
// migration lease held by a process that leads neither component. The
// timeline is written as JSON and drawn as an SVG swimlane per controller.
package migration

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"k8s.io/cloud-provider/names"
	internal "k8s.io/controller-manager/config"
	v1 "k8s.io/controller-manager/config/v1"
	lmconfig "k8s.io/controller-manager/pkg/leadermigration/config"
	"sigs.k8s.io/yaml"
)

// CloudControllers are the controllers leader migration moves out of
// kube-controller-manager, by the names both managers give them since
// Kubernetes 1.28.
var CloudControllers = []string{names.ServiceLBController, names.NodeRouteController, names.CloudNodeLifecycleController}

// DefaultLeaderName is the migration lease's name in kube-system.
const DefaultLeaderName = "cloud-provider-extraction-migration"

// Config is a LeaderMigrationConfiguration, in k8s.io/controller-manager's
// own type, as the managers read it.
type Config struct {
	internal.LeaderMigrationConfiguration
	// raw is the file a user wrote, handed to the managers as it is; nil
	// for a configuration the harness made.
	raw []byte
}

// NewConfig migrates controllers, each run by whichever component holds
// the migration lease.
func NewConfig(controllers ...string) Config {
	c := Config{LeaderMigrationConfiguration: internal.LeaderMigrationConfiguration{LeaderName: DefaultLeaderName, ResourceLock: lmconfig.ResourceLockLeases}}
	for _, name := range controllers {
		c.ControllerLeaders = append(c.ControllerLeaders, internal.ControllerLeaderConfiguration{Name: name, Component: "*"})
	}
	return c
}

// ManagersDefault is the configuration a manager started with
// --enable-leader-migration and no --leader-migration-config uses: its
// library's built-in default.
func ManagersDefault() Config {
	return Config{LeaderMigrationConfiguration: *lmconfig.DefaultLeaderMigrationConfiguration()}
}

// Without is c less the named controller: a configuration that forgets one.
func (c Config) Without(controller string) Config {
	out := Config{LeaderMigrationConfiguration: c.LeaderMigrationConfiguration}
	out.ControllerLeaders = slices.DeleteFunc(slices.Clone(c.ControllerLeaders), func(l internal.ControllerLeaderConfiguration) bool { return l.Name == controller })
	return out
}

// LeftTo is c with controller's leader set to component alone: the
// other component, under migration, does not run it.
func (c Config) LeftTo(component, controller string) Config {
	out := Config{LeaderMigrationConfiguration: c.LeaderMigrationConfiguration}
	out.ControllerLeaders = slices.Clone(c.ControllerLeaders)
	for i, l := range out.ControllerLeaders {
		if l.Name == controller {
			out.ControllerLeaders[i].Component = component
		}
	}
	return out
}

// Controllers are the migrating controllers' names.
func (c Config) Controllers() []string {
	var out []string
	for _, l := range c.ControllerLeaders {
		out = append(out, l.Name)
	}
	return out
}

// YAML is the file the managers read: the user's own, or the harness's as
// controllermanager.config.k8s.io/v1.
func (c Config) YAML() []byte {
	if c.raw != nil {
		return c.raw
	}
	out := v1.LeaderMigrationConfiguration{LeaderName: c.LeaderName}
	out.Kind, out.APIVersion = "LeaderMigrationConfiguration", v1.SchemeGroupVersion.String()
	for _, l := range c.ControllerLeaders {
		out.ControllerLeaders = append(out.ControllerLeaders, v1.ControllerLeaderConfiguration{Name: l.Name, Component: l.Component})
	}
	data, err := yaml.Marshal(out)
	if err != nil {
		panic(err) // plain strings always marshal
	}
	return data
}

// ReadConfig reads a user's LeaderMigrationConfiguration file as the
// managers do: any version of controllermanager.config.k8s.io (v1alpha1,
// v1beta1, v1), decoded strictly, then validated, with k8s.io/controller-
// manager's own reader and validation.
func ReadConfig(path string) (Config, error) {
	cfg, err := lmconfig.ReadLeaderMigrationConfiguration(path)
	if err != nil {
		// The decoder quotes the file; one line says it.
		return Config{}, fmt.Errorf("leader migration config %s: %s", path, strings.Join(strings.Fields(err.Error()), " "))
	}
	if errs := lmconfig.ValidateLeaderMigrationConfiguration(cfg); len(errs) > 0 {
		return Config{}, fmt.Errorf("leader migration config %s: %w", path, errs.ToAggregate())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return Config{LeaderMigrationConfiguration: *cfg, raw: raw}, nil
}

// CheckNames says, in one line, which of the configuration's controller
// names no manager registers: such a controller is migrated by nobody and
// runs wherever it is enabled, in two managers at once. registered are
// each manager's controllers (what its --controllers lists), by manager.
func (c Config) CheckNames(what string, registered map[string][]string) error {
	known := map[string]bool{}
	for _, ctrls := range registered {
		for _, n := range ctrls {
			known[n] = true
		}
	}
	var missing []string
	for _, n := range c.Controllers() {
		if !known[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var cloud []string
	for _, n := range CloudControllers {
		if known[n] {
			cloud = append(cloud, n)
		}
	}
	var managers []string
	for m := range registered {
		managers = append(managers, m)
	}
	slices.Sort(managers)
	return fmt.Errorf("%s names %s, which no manager registers (%s); the cloud controllers they register are %s: use those names",
		what, strings.Join(missing, ", "), strings.Join(managers, ", "), strings.Join(cloud, ", "))
}
