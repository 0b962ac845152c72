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

package model

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// EC2's security groups, as the EC2 front changes and shows them. A
// change to a group's rules derives again the load balancers that use
// it: the classic ones in it, and the network ones through the nodes'
// group.

// Why a rule change failed, beyond its Kind.
var (
	// ErrRuleExists is a rule authorized twice.
	ErrRuleExists = errors.New("rule exists")
	// ErrNoSuchRule is a rule revoked that the group has not.
	ErrNoSuchRule = errors.New("no such rule")
	// ErrGroupInUse is a group something still uses.
	ErrGroupInUse = errors.New("security group in use")
)

// Clone deep-copies g, to hand out without sharing State.
func (g *SecurityGroup) Clone() SecurityGroup {
	out := *g
	out.Tags = slices.Clone(g.Tags)
	out.Ingress = clonePermissions(g.Ingress)
	return out
}

func clonePermissions(ps []Permission) []Permission {
	out := slices.Clone(ps)
	for i := range out {
		out[i].Ranges, out[i].Groups = slices.Clone(out[i].Ranges), slices.Clone(out[i].Groups)
	}
	return out
}

func groupNotFound(id string) error {
	return awsFailed(KindNotFound, ErrNoSuchGroup, "The security group '%s' does not exist", id)
}

// SecurityGroups are copies of the security groups, the nodes' first.
func (s *Cloud) SecurityGroups() []SecurityGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []SecurityGroup
	for _, g := range s.securityGroupsLocked() {
		out = append(out, g.Clone())
	}
	return out
}

// CreateSecurityGroup makes a security group of a name no other has, and
// returns its ID.
func (s *Cloud) CreateSecurityGroup(name, description string, tags []Tag) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.securityGroupsLocked(), func(g *SecurityGroup) bool { return g.Name == name }) {
		return "", Errorf(KindConflict, "security group %q exists", name)
	}
	b := make([]byte, 9)
	rand.Read(b) // never fails, per crypto/rand
	g := &SecurityGroup{ID: "sg-" + hex.EncodeToString(b)[:17], Name: name, Description: description, Tags: tags}
	s.st.SecurityGroups = append(s.st.SecurityGroups, g)
	return g.ID, saveFailed(s.saveLocked())
}

// DeleteSecurityGroup deletes group id, which nothing may use still: no
// instance (the nodes' group is every instance's), load balancer or
// other group's rule.
func (s *Cloud) DeleteSecurityGroup(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.securityGroupLocked(id)
	if g == nil {
		return groupNotFound(id)
	}
	if s.groupInUseLocked(id) {
		return awsFailed(KindConflict, ErrGroupInUse, "resource %s has a dependent object", id)
	}
	s.st.SecurityGroups = slices.DeleteFunc(s.st.SecurityGroups, func(x *SecurityGroup) bool { return x == g })
	return saveFailed(s.saveLocked())
}

func (s *Cloud) groupInUseLocked(id string) bool {
	inUse := id == api.AWSNodeSecurityGroup
	for _, lb := range s.st.LoadBalancers {
		inUse = inUse || (lb.ELB != nil && slices.Contains(lb.ELB.SecurityGroups, id))
	}
	for _, other := range s.st.SecurityGroups {
		for _, p := range other.Ingress {
			inUse = inUse || (other.ID != id && slices.Contains(p.Groups, id))
		}
	}
	return inUse
}

// ChangeIngress authorizes (add) or revokes perms in group id: their
// peers one by one, as EC2 keeps them, refusing a duplicate or a missing
// one. The load balancers the group admits clients to are derived again;
// a failure there (KindInternal) leaves the rules changed, as before.
func (s *Cloud) ChangeIngress(id string, add bool, perms []Permission) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.securityGroupLocked(id)
	if g == nil {
		return groupNotFound(id)
	}
	next := clonePermissions(g.Ingress)
	for _, p := range perms {
		var err error
		if next, err = s.changeRuleLocked(next, add, p); err != nil {
			return err
		}
	}
	g.Ingress = slices.DeleteFunc(next, func(p Permission) bool { return len(p.Ranges) == 0 && len(p.Groups) == 0 })
	rederive := s.classicRederiveLocked
	if id == api.AWSNodeSecurityGroup {
		rederive = func(string) error { return s.networkRederiveLocked() }
	}
	if err := rederive(id); err != nil {
		return &Error{Kind: KindInternal, Err: err}
	}
	return saveFailed(s.saveLocked())
}

// changeRuleLocked adds p's peers to the rules next, or takes them out.
func (s *Cloud) changeRuleLocked(next []Permission, add bool, p Permission) ([]Permission, error) {
	for _, peer := range p.Groups {
		if add && s.securityGroupLocked(peer) == nil {
			return nil, groupNotFound(peer)
		}
	}
	j := slices.IndexFunc(next, p.SameRule)
	if add && j < 0 {
		next = append(next, Permission{Protocol: p.Protocol, FromPort: p.FromPort, ToPort: p.ToPort})
		j = len(next) - 1
	}
	for _, rg := range p.Ranges {
		k := -1
		if j >= 0 {
			k = slices.IndexFunc(next[j].Ranges, func(x IPRange) bool { return x.CIDR == rg.CIDR })
		}
		if err := ruleChangeFails(add, k, p, rg.CIDR); err != nil {
			return nil, err
		}
		if add {
			next[j].Ranges = append(next[j].Ranges, rg)
		} else {
			next[j].Ranges = slices.Delete(next[j].Ranges, k, k+1)
		}
	}
	for _, peer := range p.Groups {
		k := -1
		if j >= 0 {
			k = slices.Index(next[j].Groups, peer)
		}
		if err := ruleChangeFails(add, k, p, peer); err != nil {
			return nil, err
		}
		if add {
			next[j].Groups = append(next[j].Groups, peer)
		} else {
			next[j].Groups = slices.Delete(next[j].Groups, k, k+1)
		}
	}
	return next, nil
}

// ruleChangeFails refuses to authorize a peer the rule has (at k) or to
// revoke one it has not.
func ruleChangeFails(add bool, k int, p Permission, peer string) error {
	switch {
	case add && k >= 0:
		return awsFailed(KindConflict, ErrRuleExists, "the specified rule \"%s\" already exists", p.Describe(peer))
	case !add && k < 0:
		return awsFailed(KindNotFound, ErrNoSuchRule, "The specified rule does not exist in this security group.")
	}
	return nil
}

// TagSecurityGroups sets tags on groups ids, one group after the other:
// an unknown ID stops there, the groups before it tagged (and saved with
// the next change), as before.
func (s *Cloud) TagSecurityGroups(ids []string, tags []Tag) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		g := s.securityGroupLocked(id)
		if g == nil {
			return Errorf(KindNotFound, "The ID '%s' is not valid (fakecloud tags security groups only)", id)
		}
		for _, t := range tags {
			g.Tags = slices.DeleteFunc(g.Tags, func(x Tag) bool { return x.Key == t.Key })
			g.Tags = append(g.Tags, t)
		}
	}
	return saveFailed(s.saveLocked())
}
