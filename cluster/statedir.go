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

package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// A runtime keeps each cluster's state in a folder of its own, <root>/<name>.
// The harness runs as root for many users and removes these folders, so it
// removes only a folder that bears its marker: a name that is a path, or a
// folder someone else made, is never touched.

// stateMarker is the file that marks a folder as a cluster's state folder.
const stateMarker = ".ccm-harness-cluster"

// ErrNoCluster is the error of a name that has no state folder.
var ErrNoCluster = errors.New("no such cluster")

// maxNameLength leaves room in kind's container names for node suffixes.
const maxNameLength = 42

// CheckName refuses a cluster name that is not a DNS-1123 label of at most
// 42 characters: it names folders, and kind's containers. Every door checks
// a name with it where it reads the name.
func CheckName(name string) error {
	if len(validation.IsDNS1123Label(name)) > 0 || len(name) > maxNameLength {
		return fmt.Errorf("cluster name %q is not valid: use lower-case letters, digits and '-', at most %d characters", name, maxNameLength)
	}
	return nil
}

// ResetStateDir makes dir, a cluster's state folder, empty and marked,
// removing what a harness that died without `down` left in it. It refuses
// a folder that holds files but no marker.
func ResetStateDir(dir string) error {
	if err := RemoveStateDir(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, stateMarker), nil, 0o600)
}

// RemoveStateDir removes dir if it is a cluster's state folder: marked, or
// empty (a claim that died before its marker). A missing dir is no error.
func RemoveStateDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 && !slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == stateMarker }) {
		return fmt.Errorf("%s is not a cluster's state folder (no %s in it): left alone; remove it by hand if it is yours", dir, stateMarker)
	}
	return os.RemoveAll(dir)
}

// FindStateDir is the state folder of cluster name under root, or an error
// wrapping ErrNoCluster that names the clusters root does hold.
func FindStateDir(root, name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	dir := filepath.Join(root, name)
	if _, err := os.Stat(filepath.Join(dir, stateMarker)); err == nil {
		return dir, nil
	}
	var names []string
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, e.Name(), stateMarker)); err == nil {
			names = append(names, e.Name())
		}
	}
	held := "none"
	if len(names) > 0 {
		held = strings.Join(names, ", ")
	}
	return "", fmt.Errorf("%w: cluster %s has no state under %s, so nothing was taken down (clusters there: %s)", ErrNoCluster, name, root, held)
}

// AdminDirName is the admin folder's name in a cluster's state folder.
const AdminDirName = "cloud-admin"

// adminOwner owns a cluster's admin folder when the harness runs as root:
// a user no process of the harness runs as, so that the CCM under test,
// root without capabilities (process.Spec.Unprivileged), cannot enter it.
const adminOwner = 65533

// MakeAdminDir makes the folder of a cluster's cloud admin credentials,
// apart from the cloud's folder (which a CCM's container mounts whole):
// the harness and the cloud read it, the CCM under test cannot.
func MakeAdminDir(stateDir string) (string, error) {
	dir := filepath.Join(stateDir, AdminDirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, adminOwner, adminOwner); err != nil {
			return "", fmt.Errorf("admin credentials' folder %s: %w", dir, err)
		}
	}
	return dir, nil
}
