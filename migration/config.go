// Package migration watches a control plane move its cloud controllers
// between kube-controller-manager and a cloud-controller-manager under
// leader migration (KEP-2436): a recorder samples, about twice a second,
// which controllers each manager process runs and who holds the leases,
// and the timeline it keeps is checked for a controller running in two
// places at once, a controller left without a manager for too long, and a
// migration lease held by a process that leads neither component. The
// timeline is written as JSON and drawn as an SVG swimlane per controller.
package migration

import (
	"fmt"
	"slices"

	"sigs.k8s.io/yaml"
)

// The controllers leader migration moves out of kube-controller-manager, by
// the names both managers give them since Kubernetes 1.28.
var CloudControllers = []string{"service-lb-controller", "node-route-controller", "cloud-node-lifecycle-controller"}

// DefaultLeaderName is the migration lease's name in kube-system.
const DefaultLeaderName = "cloud-provider-extraction-migration"

// Config is a LeaderMigrationConfiguration (controllermanager.config.k8s.io/v1).
type Config struct {
	Kind              string             `json:"kind"`
	APIVersion        string             `json:"apiVersion"`
	LeaderName        string             `json:"leaderName"`
	ControllerLeaders []ControllerLeader `json:"controllerLeaders"`
}

// ControllerLeader names a migrating controller and the component that
// runs it; "*" is whichever holds the migration lease.
type ControllerLeader struct {
	Name      string `json:"name"`
	Component string `json:"component"`
}

// NewConfig migrates controllers, each run by whichever component holds
// the migration lease.
func NewConfig(controllers ...string) Config {
	c := Config{Kind: "LeaderMigrationConfiguration", APIVersion: "controllermanager.config.k8s.io/v1", LeaderName: DefaultLeaderName}
	for _, name := range controllers {
		c.ControllerLeaders = append(c.ControllerLeaders, ControllerLeader{Name: name, Component: "*"})
	}
	return c
}

// Without is c less the named controller: a configuration that forgets one.
func (c Config) Without(controller string) Config {
	out := c
	out.ControllerLeaders = slices.DeleteFunc(slices.Clone(c.ControllerLeaders), func(l ControllerLeader) bool { return l.Name == controller })
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

// YAML is the file the managers read.
func (c Config) YAML() []byte {
	data, err := yaml.Marshal(c)
	if err != nil {
		panic(err) // plain strings always marshal
	}
	return data
}

// ParseConfig reads a user's LeaderMigrationConfiguration file, strictly,
// as the managers since 1.32 do.
func ParseConfig(data []byte) (Config, error) {
	var c Config
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return Config{}, fmt.Errorf("leader migration config: %w", err)
	}
	if c.Kind != "LeaderMigrationConfiguration" || c.LeaderName == "" || len(c.ControllerLeaders) == 0 {
		return Config{}, fmt.Errorf("leader migration config: want kind LeaderMigrationConfiguration with a leaderName and controllerLeaders, got kind %q, leaderName %q and %d controllers", c.Kind, c.LeaderName, len(c.ControllerLeaders))
	}
	return c, nil
}
