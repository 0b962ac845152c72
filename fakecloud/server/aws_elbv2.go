package server

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/ccm-harness/fakecloud/api"
)

// Elastic Load Balancing v2, API version 2015-12-01, for Network Load
// Balancers: a network load balancer is one of fakecloud's, with real
// TCP and UDP listeners on its address. Target groups are resources of
// their own, as in ELBv2; a listener forwards to one. The native spec is
// derived from the load balancer, its listeners' target groups and the
// nodes' security group on every change: a listener's node port is its
// target group's targets' port, the backends the targets, the health
// check node port an HTTP health check's port, the source ranges the
// nodes' group's rules the AWS CCM describes as the load balancer's
// clients (kubernetes.io/rule/nlb/client=<name>).

const elbv2Version = "2015-12-01"

// nlbLB is a network load balancer's ELBv2 view, as stored.
type nlbLB struct {
	ARN            string            `json:"arn"`
	DNSName        string            `json:"dnsName"`
	Scheme         string            `json:"scheme"`
	Subnets        []string          `json:"subnets"`
	SecurityGroups []string          `json:"securityGroups"`
	Listeners      []nlbListener     `json:"listeners"`
	Attributes     map[string]string `json:"attributes"`
	Tags           []ec2Tag          `json:"tags"`
}

type nlbListener struct {
	ARN         string `json:"arn"`
	Port        int32  `json:"port"`
	Protocol    string `json:"protocol"`
	TargetGroup string `json:"targetGroup"`
}

// nlbTargetGroup is a target group as stored.
type nlbTargetGroup struct {
	ARN         string         `json:"arn"`
	Name        string         `json:"name"`
	Protocol    string         `json:"protocol"`
	Port        int32          `json:"port"`
	TargetType  string         `json:"targetType"`
	HealthCheck nlbHealthCheck `json:"healthCheck"`
	Targets     []nlbTarget    `json:"targets"`
	Tags        []ec2Tag       `json:"tags"`
}

type nlbHealthCheck struct {
	Protocol  string `json:"protocol"`
	Port      string `json:"port"`
	Path      string `json:"path,omitempty"`
	Interval  int    `json:"interval"`
	Timeout   int    `json:"timeout"`
	Healthy   int    `json:"healthy"`
	Unhealthy int    `json:"unhealthy"`
}

type nlbTarget struct {
	ID   string `json:"id"`
	Port int32  `json:"port"`
}

// nlbDefaultAttributes are a network load balancer's attributes as AWS
// makes it.
var nlbDefaultAttributes = map[string]string{
	"load_balancing.cross_zone.enabled": "false", "access_logs.s3.enabled": "false",
	"access_logs.s3.bucket": "", "access_logs.s3.prefix": "", "deletion_protection.enabled": "false",
}

func (s *Server) elbv2Service() *awsService {
	svc := &awsService{
		path:       api.AWSPath + "elbv2/",
		signing:    "elasticloadbalancing",
		version:    elbv2Version,
		xmlns:      "http://elasticloadbalancing.amazonaws.com/doc/" + elbv2Version + "/",
		errorShape: elbErrorXML,
	}
	svc.actions = map[string]awsAction{
		"DescribeLoadBalancers":          {api.OpListLoadBalancers, s.nlbDescribe(svc)},
		"CreateLoadBalancer":             {api.OpEnsureLoadBalancer, s.nlbCreate(svc)},
		"DeleteLoadBalancer":             {api.OpDeleteLoadBalancer, s.nlbDelete(svc)},
		"DescribeLoadBalancerAttributes": {api.OpGetLoadBalancer, s.nlbAttributes(svc, false)},
		"ModifyLoadBalancerAttributes":   {api.OpEnsureLoadBalancer, s.nlbAttributes(svc, true)},
		"DescribeListeners":              {api.OpGetLoadBalancer, s.nlbDescribeListeners(svc)},
		"CreateListener":                 {api.OpEnsureLoadBalancer, s.nlbListenerChange(svc, "CreateListener")},
		"ModifyListener":                 {api.OpEnsureLoadBalancer, s.nlbListenerChange(svc, "ModifyListener")},
		"DeleteListener":                 {api.OpEnsureLoadBalancer, s.nlbListenerChange(svc, "DeleteListener")},
		"DescribeTargetGroups":           {api.OpGetLoadBalancer, s.nlbDescribeTargetGroups(svc)},
		"CreateTargetGroup":              {api.OpEnsureLoadBalancer, s.nlbCreateTargetGroup(svc)},
		"ModifyTargetGroup":              {api.OpEnsureLoadBalancer, s.nlbTargetGroupChange(svc, "ModifyTargetGroup")},
		"DeleteTargetGroup":              {api.OpEnsureLoadBalancer, s.nlbTargetGroupChange(svc, "DeleteTargetGroup")},
		"RegisterTargets":                {api.OpEnsureLoadBalancer, s.nlbTargetGroupChange(svc, "RegisterTargets")},
		"DeregisterTargets":              {api.OpEnsureLoadBalancer, s.nlbTargetGroupChange(svc, "DeregisterTargets")},
		"DescribeTargetHealth":           {api.OpGetLoadBalancer, s.nlbDescribeTargetHealth(svc)},
		"DescribeTags":                   {api.OpGetLoadBalancer, s.nlbDescribeTags(svc)},
	}
	return svc
}

func nlbNotFound(what string) *awsErr {
	return awsError(http.StatusBadRequest, "LoadBalancerNotFound", "One or more load balancers not found: %s", what)
}

func tgNotFound(arn string) *awsErr {
	return awsError(http.StatusBadRequest, "TargetGroupNotFound", "One or more target groups not found: '%s'", arn)
}

// nlbArn is an ELBv2 resource's ARN.
func (s *Server) nlbArn(kind, name, id string) string {
	return fmt.Sprintf("arn:aws:elasticloadbalancing:%s:%s:%s/%s/%s", s.region, api.AWSAccountID, kind, name, id)
}

// nlbLocked is the network load balancer with this ARN or name, or nil.
func (s *Server) nlbLocked(ref string) *lbRecord {
	for _, rec := range s.st.LoadBalancers {
		if rec.NLB != nil && (rec.NLB.ARN == ref || rec.Name == ref) {
			return rec
		}
	}
	return nil
}

func (s *Server) targetGroupLocked(arn string) *nlbTargetGroup {
	for _, tg := range s.st.TargetGroups {
		if tg.ARN == arn {
			return tg
		}
	}
	return nil
}

// nlbClientRule is how the AWS CCM describes the nodes' group rules that
// admit a network load balancer's clients.
func nlbClientRule(name string) string { return "kubernetes.io/rule/nlb/client=" + name }

// nlbSpecLocked derives the native spec from the ELBv2 view.
func (s *Server) nlbSpecLocked(name string, n *nlbLB) (api.LoadBalancerSpec, error) {
	spec := api.LoadBalancerSpec{Listeners: []api.Listener{}, Backends: []string{}, Tags: map[string]string{}}
	for _, t := range n.Tags {
		if t.Key == "kubernetes.io/service-name" {
			spec.Tags[api.TagService] = t.Value
		}
	}
	for _, l := range n.Listeners {
		tg := s.targetGroupLocked(l.TargetGroup)
		nodePort := int32(0)
		if tg != nil {
			nodePort = tg.Port
			for _, t := range tg.Targets {
				nodePort = t.Port
				if s.instanceByIDLocked(t.ID) != nil && !slices.Contains(spec.Backends, t.ID) {
					spec.Backends = append(spec.Backends, t.ID)
				}
			}
			if tg.HealthCheck.Protocol == "HTTP" || tg.HealthCheck.Protocol == "HTTPS" {
				if p, err := strconv.ParseInt(tg.HealthCheck.Port, 10, 32); err == nil {
					spec.HealthCheckNodePort = int32(p)
				}
			}
		}
		protocols := []string{l.Protocol}
		if l.Protocol == "TCP_UDP" {
			protocols = []string{"TCP", "UDP"}
		}
		for _, p := range protocols {
			proto := api.ProtocolTCP
			if p == "UDP" {
				proto = api.ProtocolUDP
			}
			spec.Listeners = append(spec.Listeners, api.Listener{Port: l.Port, Protocol: proto, NodePort: nodePort})
		}
	}
	if g := s.awsGroupLocked(api.AWSNodeSecurityGroup); g != nil {
		for _, p := range g.Ingress {
			for _, r := range p.Ranges {
				if r.Description == nlbClientRule(name) && !allowsAll(r.CIDR) && !slices.Contains(spec.SourceRanges, r.CIDR) {
					spec.SourceRanges = append(spec.SourceRanges, r.CIDR)
				}
			}
		}
	}
	return spec, validateLBSpec(spec)
}

// nlbCommitLocked makes next rec's ELBv2 view, with what an ignore fault
// drops left as it was, and the native spec and listeners to match.
func (s *Server) nlbCommitLocked(f *api.Fault, rec *lbRecord, isNew bool, next *nlbLB) *awsErr {
	if f != nil && f.Kind == api.FaultIgnore && f.Field == api.IgnoreListeners {
		next.Listeners = nil
		if !isNew {
			next.Listeners = slices.Clone(rec.NLB.Listeners)
		}
	}
	upd := *rec
	upd.NLB = next
	spec, err := s.nlbSpecLocked(upd.Name, next)
	if err != nil {
		return elbValidation("%v", err)
	}
	upd.LoadBalancerSpec = spec
	if err := s.openLocked(&upd, isNew); err != nil {
		return awsError(http.StatusInternalServerError, "InternalFailure", "fakecloud could not open the listeners: %v", err)
	}
	*rec = upd
	if isNew {
		s.st.LoadBalancers = append(s.st.LoadBalancers, rec)
		s.st.LastLBIP = rec.IP
	}
	return nil
}

// nlbRederiveLocked derives again the specs of the network load
// balancers, after a change to a target group or the nodes' group.
func (s *Server) nlbRederiveLocked() error {
	for _, rec := range s.st.LoadBalancers {
		if rec.NLB == nil {
			continue
		}
		spec, err := s.nlbSpecLocked(rec.Name, rec.NLB)
		if err != nil {
			return err
		}
		upd := *rec
		upd.LoadBalancerSpec = spec
		if err := s.openLocked(&upd, false); err != nil {
			return err
		}
		*rec = upd
	}
	return nil
}

// nlbWire is a network load balancer as DescribeLoadBalancers and
// CreateLoadBalancer answer it.
type nlbWire struct {
	LoadBalancerArn       string
	LoadBalancerName      string
	DNSName               string
	CanonicalHostedZoneID string `xml:"CanonicalHostedZoneId"`
	CreatedTime           string
	Scheme                string
	Type                  string
	State                 struct{ Code string }
	VpcID                 string `xml:"VpcId"`
	IPAddressType         string `xml:"IpAddressType"`
	AvailabilityZones     []struct {
		ZoneName string
		SubnetID string `xml:"SubnetId"`
	} `xml:"AvailabilityZones>member"`
	SecurityGroups []string `xml:"SecurityGroups>member"`
}

func (s *Server) nlbWireLocked(rec *lbRecord) nlbWire {
	n := rec.NLB
	w := nlbWire{LoadBalancerArn: n.ARN, LoadBalancerName: rec.Name, DNSName: n.DNSName, CanonicalHostedZoneID: "Z26RNL4JYFTOTI",
		CreatedTime: rec.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z"), Scheme: n.Scheme, Type: "network",
		VpcID: api.AWSVPCID, IPAddressType: "ipv4", SecurityGroups: n.SecurityGroups}
	w.State.Code = "active"
	for _, sn := range s.ec2Subnets() {
		if slices.Contains(n.Subnets, sn.ID) {
			w.AvailabilityZones = append(w.AvailabilityZones, struct {
				ZoneName string
				SubnetID string `xml:"SubnetId"`
			}{sn.Zone, sn.ID})
		}
	}
	return w
}

func (s *Server) nlbCreate(svc *awsService) func(http.ResponseWriter, *http.Request, *call, *awsQuery) {
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsQuery) {
		name, typ, scheme := q.get("Name"), q.get("Type"), q.get("Scheme")
		_, _ = q.get("IpAddressType"), q.get("SecurityGroups")
		subnets := q.list("Subnets.member")
		for _, m := range q.structs("SubnetMappings.member", "SubnetId") {
			subnets = append(subnets, m["SubnetId"])
		}
		groups := q.list("SecurityGroups.member")
		tags := q.structs("Tags.member", "Key", "Value")
		e := q.done()
		switch {
		case e != nil:
		case !elbName(name):
			e = elbValidation("Name %q must be 1 to 32 letters, digits and hyphens, not starting with a hyphen", name)
		case typ != "network":
			e = elbValidation("fakecloud emulates load balancers of Type network only, not %q", typ)
		case len(subnets) == 0:
			e = elbValidation("At least one subnet must be specified")
		case scheme != "" && scheme != "internal" && scheme != "internet-facing":
			e = elbValidation("Invalid scheme '%s'", scheme)
		}
		if e != nil {
			elbFail(w, e)
			return
		}
		if scheme == "" {
			scheme = "internet-facing"
		}
		f, ok := s.elbFault(w, r, c, name)
		if !ok {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if e := s.elbCheckRefsLocked(subnets, groups); e != nil {
			elbFail(w, e)
			return
		}
		rec := s.lbByNameLocked(name)
		if rec != nil && rec.NLB == nil {
			elbFail(w, awsError(http.StatusBadRequest, "DuplicateLoadBalancerName", "A load balancer with the same name '%s' exists, but with different settings", name))
			return
		}
		if rec == nil {
			ip, err := s.allocateLBIPLocked()
			if err != nil {
				elbFail(w, awsError(http.StatusBadRequest, "TooManyLoadBalancers", "%v", err))
				return
			}
			rec = &lbRecord{Name: name, ID: s.newLBIDLocked(), IP: ip.String(), CreatedAt: time.Now().UTC()}
			hash := awsHash(16, rec.ID)
			next := &nlbLB{ARN: s.nlbArn("loadbalancer/net", name, hash), Scheme: scheme, Subnets: subnets, SecurityGroups: groups,
				DNSName: fmt.Sprintf("%s-%s.elb.%s.amazonaws.com", name, hash, s.region), Attributes: map[string]string{}}
			for k, v := range nlbDefaultAttributes {
				next.Attributes[k] = v
			}
			for _, t := range tags {
				next.Tags = append(next.Tags, ec2Tag{Key: t["Key"], Value: t["Value"]})
			}
			if e := s.nlbCommitLocked(f, rec, true, next); e != nil {
				elbFail(w, e)
				return
			}
			if err := s.saveLocked(); err != nil {
				saveFailed(w, err)
				return
			}
		}
		svc.answer(w, "CreateLoadBalancer", struct {
			LoadBalancers []nlbWire `xml:"LoadBalancers>member"`
		}{[]nlbWire{s.nlbWireLocked(rec)}})
	}
}

func (s *Server) nlbDescribe(svc *awsService) func(http.ResponseWriter, *http.Request, *call, *awsQuery) {
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsQuery) {
		refs := append(q.list("Names.member"), q.list("LoadBalancerArns.member")...)
		_, _ = q.get("Marker"), q.get("PageSize")
		if e := q.done(); e != nil {
			elbFail(w, e)
			return
		}
		name := ""
		if len(refs) == 1 {
			c.op, name = api.OpGetLoadBalancer, refs[0]
		}
		if _, ok := s.elbFault(w, r, c, name); !ok {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		body := struct {
			LoadBalancers []nlbWire `xml:"LoadBalancers>member"`
		}{}
		for _, ref := range refs {
			if s.nlbLocked(ref) == nil {
				elbFail(w, nlbNotFound("'"+ref+"'"))
				return
			}
		}
		for _, rec := range s.st.LoadBalancers {
			if rec.NLB != nil && (len(refs) == 0 || slices.Contains(refs, rec.Name) || slices.Contains(refs, rec.NLB.ARN)) {
				body.LoadBalancers = append(body.LoadBalancers, s.nlbWireLocked(rec))
			}
		}
		svc.answer(w, "DescribeLoadBalancers", body)
	}
}

// nlbDelete deletes a network load balancer and its listeners; its
// target groups stay, as in ELBv2. One that does not exist is deleted
// already.
func (s *Server) nlbDelete(svc *awsService) func(http.ResponseWriter, *http.Request, *call, *awsQuery) {
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsQuery) {
		arn := q.get("LoadBalancerArn")
		s.elbRead(w, r, c, q, arn, func(*lbRecord) {
			if rec := s.nlbLocked(arn); rec != nil {
				s.dp.remove(rec.ID)
				s.st.LoadBalancers = slices.DeleteFunc(s.st.LoadBalancers, func(l *lbRecord) bool { return l == rec })
				if err := s.saveLocked(); err != nil {
					saveFailed(w, err)
					return
				}
			}
			svc.answer(w, "DeleteLoadBalancer", struct{}{})
		})
	}
}

type nlbAttribute struct{ Key, Value string }

func (s *Server) nlbAttributes(svc *awsService, modify bool) func(http.ResponseWriter, *http.Request, *call, *awsQuery) {
	action := "DescribeLoadBalancerAttributes"
	if modify {
		action = "ModifyLoadBalancerAttributes"
	}
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsQuery) {
		arn := q.get("LoadBalancerArn")
		changes := q.structs("Attributes.member", "Key", "Value")
		s.elbRead(w, r, c, q, arn, func(*lbRecord) {
			rec := s.nlbLocked(arn)
			if rec == nil {
				elbFail(w, nlbNotFound("'"+arn+"'"))
				return
			}
			for _, a := range changes {
				rec.NLB.Attributes[a["Key"]] = a["Value"]
			}
			if modify {
				if err := s.saveLocked(); err != nil {
					saveFailed(w, err)
					return
				}
			}
			body := struct {
				Attributes []nlbAttribute `xml:"Attributes>member"`
			}{}
			for _, k := range sortedKeys(rec.NLB.Attributes) {
				body.Attributes = append(body.Attributes, nlbAttribute{k, rec.NLB.Attributes[k]})
			}
			svc.answer(w, action, body)
		})
	}
}

// nlbListenerWire is a listener as ELBv2 answers it.
type nlbListenerWire struct {
	ListenerArn     string
	LoadBalancerArn string
	Port            int32
	Protocol        string
	DefaultActions  []struct {
		Type           string
		TargetGroupArn string
	} `xml:"DefaultActions>member"`
}

func listenerWire(lb string, l nlbListener) nlbListenerWire {
	out := nlbListenerWire{ListenerArn: l.ARN, LoadBalancerArn: lb, Port: l.Port, Protocol: l.Protocol}
	out.DefaultActions = append(out.DefaultActions, struct {
		Type           string
		TargetGroupArn string
	}{"forward", l.TargetGroup})
	return out
}

func (s *Server) nlbDescribeListeners(svc *awsService) func(http.ResponseWriter, *http.Request, *call, *awsQuery) {
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsQuery) {
		arn := q.get("LoadBalancerArn")
		arns := q.list("ListenerArns.member")
		_, _ = q.get("Marker"), q.get("PageSize")
		s.elbRead(w, r, c, q, arn, func(*lbRecord) {
			body := struct {
				Listeners []nlbListenerWire `xml:"Listeners>member"`
			}{}
			if arn != "" && s.nlbLocked(arn) == nil {
				elbFail(w, nlbNotFound("'"+arn+"'"))
				return
			}
			for _, rec := range s.st.LoadBalancers {
				if rec.NLB == nil || (arn != "" && rec.NLB.ARN != arn) {
					continue
				}
				for _, l := range rec.NLB.Listeners {
					if len(arns) == 0 || slices.Contains(arns, l.ARN) {
						body.Listeners = append(body.Listeners, listenerWire(rec.NLB.ARN, l))
					}
				}
			}
			svc.answer(w, "DescribeListeners", body)
		})
	}
}

// nlbListenerOf is the load balancer holding the listener with this ARN.
func (s *Server) nlbListenerOf(arn string) (*lbRecord, int) {
	for _, rec := range s.st.LoadBalancers {
		if rec.NLB == nil {
			continue
		}
		if i := slices.IndexFunc(rec.NLB.Listeners, func(l nlbListener) bool { return l.ARN == arn }); i >= 0 {
			return rec, i
		}
	}
	return nil, -1
}

// nlbListenerChange creates, modifies or deletes a listener.
func (s *Server) nlbListenerChange(svc *awsService, action string) func(http.ResponseWriter, *http.Request, *call, *awsQuery) {
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsQuery) {
		lbArn, listenerArn := q.get("LoadBalancerArn"), q.get("ListenerArn")
		port, proto := q.get("Port"), strings.ToUpper(q.get("Protocol"))
		actions := q.structs("DefaultActions.member", "Type", "TargetGroupArn")
		_ = q.structs("Tags.member", "Key", "Value")
		_, _ = q.get("SslPolicy"), q.get("AlpnPolicy")
		if e := q.done(); e != nil {
			elbFail(w, e)
			return
		}
		f, ok := s.elbFault(w, r, c, lbArn)
		if !ok {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		var rec *lbRecord
		i := -1
		if action == "CreateListener" {
			rec = s.nlbLocked(lbArn)
			if rec == nil {
				elbFail(w, nlbNotFound("'"+lbArn+"'"))
				return
			}
		} else if rec, i = s.nlbListenerOf(listenerArn); rec == nil {
			elbFail(w, awsError(http.StatusBadRequest, "ListenerNotFound", "One or more listeners not found"))
			return
		}
		next := *rec.NLB
		next.Listeners = slices.Clone(rec.NLB.Listeners)
		if action == "DeleteListener" {
			next.Listeners = slices.Delete(next.Listeners, i, i+1)
		} else {
			l := nlbListener{ARN: listenerArn}
			if i >= 0 {
				l = next.Listeners[i]
			}
			if port != "" {
				n, err := strconv.ParseInt(port, 10, 32)
				if err != nil || n < 1 || n > 65535 {
					elbFail(w, elbValidation("Port %q must be 1 to 65535", port))
					return
				}
				l.Port = int32(n)
			}
			if proto != "" {
				l.Protocol = proto
			}
			if len(actions) > 0 {
				if actions[0]["Type"] != "forward" || s.targetGroupLocked(actions[0]["TargetGroupArn"]) == nil {
					elbFail(w, tgNotFound(actions[0]["TargetGroupArn"]))
					return
				}
				l.TargetGroup = actions[0]["TargetGroupArn"]
			}
			switch l.Protocol {
			case "TCP", "UDP", "TCP_UDP", "TLS":
			default:
				elbFail(w, elbValidation("Protocol '%s' is not valid for a network load balancer's listener", l.Protocol))
				return
			}
			if l.TargetGroup == "" {
				elbFail(w, elbValidation("A listener needs a default action that forwards to a target group"))
				return
			}
			if slices.ContainsFunc(next.Listeners, func(x nlbListener) bool { return x.Port == l.Port && x.ARN != l.ARN }) {
				elbFail(w, awsError(http.StatusBadRequest, "DuplicateListener", "A listener already exists on this port for this load balancer"))
				return
			}
			if i >= 0 {
				next.Listeners[i] = l
			} else {
				l.ARN = s.nlbArn("listener/net", rec.Name, awsHash(16, rec.ID)+"/"+awsHash(16, rec.ID, strconv.Itoa(int(l.Port)), l.Protocol, time.Now().String()))
				next.Listeners = append(next.Listeners, l)
				i = len(next.Listeners) - 1
			}
		}
		if e := s.nlbCommitLocked(f, rec, false, &next); e != nil {
			elbFail(w, e)
			return
		}
		if err := s.saveLocked(); err != nil {
			saveFailed(w, err)
			return
		}
		body := struct {
			Listeners []nlbListenerWire `xml:"Listeners>member"`
		}{}
		if action != "DeleteListener" && i < len(rec.NLB.Listeners) {
			body.Listeners = append(body.Listeners, listenerWire(rec.NLB.ARN, rec.NLB.Listeners[i]))
		}
		svc.answer(w, action, body)
	}
}

// tgWire is a target group as ELBv2 answers it.
type tgWire struct {
	TargetGroupArn             string
	TargetGroupName            string
	Protocol                   string
	Port                       int32
	VpcID                      string `xml:"VpcId"`
	TargetType                 string
	HealthCheckEnabled         bool
	HealthCheckProtocol        string
	HealthCheckPort            string
	HealthCheckPath            string `xml:",omitempty"`
	HealthCheckIntervalSeconds int
	HealthCheckTimeoutSeconds  int
	HealthyThresholdCount      int
	UnhealthyThresholdCount    int
	LoadBalancerArns           []string `xml:"LoadBalancerArns>member"`
}

func (s *Server) tgWireLocked(tg *nlbTargetGroup) tgWire {
	out := tgWire{TargetGroupArn: tg.ARN, TargetGroupName: tg.Name, Protocol: tg.Protocol, Port: tg.Port, VpcID: api.AWSVPCID,
		TargetType: tg.TargetType, HealthCheckEnabled: true, HealthCheckProtocol: tg.HealthCheck.Protocol, HealthCheckPort: tg.HealthCheck.Port,
		HealthCheckPath: tg.HealthCheck.Path, HealthCheckIntervalSeconds: tg.HealthCheck.Interval, HealthCheckTimeoutSeconds: tg.HealthCheck.Timeout,
		HealthyThresholdCount: tg.HealthCheck.Healthy, UnhealthyThresholdCount: tg.HealthCheck.Unhealthy}
	out.LoadBalancerArns = s.tgUsersLocked(tg.ARN)
	return out
}

// tgUsersLocked are the load balancers whose listeners forward to a
// target group.
func (s *Server) tgUsersLocked(arn string) []string {
	var out []string
	for _, rec := range s.st.LoadBalancers {
		if rec.NLB != nil && slices.ContainsFunc(rec.NLB.Listeners, func(l nlbListener) bool { return l.TargetGroup == arn }) {
			out = append(out, rec.NLB.ARN)
		}
	}
	return out
}

func (s *Server) nlbDescribeTargetGroups(svc *awsService) func(http.ResponseWriter, *http.Request, *call, *awsQuery) {
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsQuery) {
		lbArn := q.get("LoadBalancerArn")
		arns, names := q.list("TargetGroupArns.member"), q.list("Names.member")
		_, _ = q.get("Marker"), q.get("PageSize")
		s.elbRead(w, r, c, q, lbArn, func(*lbRecord) {
			if lbArn != "" && s.nlbLocked(lbArn) == nil {
				elbFail(w, nlbNotFound("'"+lbArn+"'"))
				return
			}
			for _, arn := range arns {
				if s.targetGroupLocked(arn) == nil {
					elbFail(w, tgNotFound(arn))
					return
				}
			}
			body := struct {
				TargetGroups []tgWire `xml:"TargetGroups>member"`
			}{}
			for _, tg := range s.st.TargetGroups {
				if (lbArn != "" && !slices.Contains(s.tgUsersLocked(tg.ARN), lbArn)) || (len(arns) > 0 && !slices.Contains(arns, tg.ARN)) ||
					(len(names) > 0 && !slices.Contains(names, tg.Name)) {
					continue
				}
				body.TargetGroups = append(body.TargetGroups, s.tgWireLocked(tg))
			}
			svc.answer(w, "DescribeTargetGroups", body)
		})
	}
}

// healthCheckArgs reads a target group's health check settings into hc.
func healthCheckArgs(q *awsQuery, hc *nlbHealthCheck) *awsErr {
	for k, dst := range map[string]*string{"HealthCheckProtocol": &hc.Protocol, "HealthCheckPort": &hc.Port, "HealthCheckPath": &hc.Path} {
		if q.form.Has(k) {
			*dst = q.get(k)
		}
	}
	for k, dst := range map[string]*int{"HealthCheckIntervalSeconds": &hc.Interval, "HealthCheckTimeoutSeconds": &hc.Timeout,
		"HealthyThresholdCount": &hc.Healthy, "UnhealthyThresholdCount": &hc.Unhealthy} {
		if q.form.Has(k) {
			n, err := strconv.Atoi(q.get(k))
			if err != nil {
				return elbValidation("%s must be a number", k)
			}
			*dst = n
		}
	}
	_ = q.get("HealthCheckEnabled")
	switch hc.Protocol {
	case "TCP", "HTTP", "HTTPS":
	default:
		return elbValidation("Health check protocol '%s' is not TCP, HTTP or HTTPS", hc.Protocol)
	}
	if hc.Port != "traffic-port" {
		if n, err := strconv.Atoi(hc.Port); err != nil || n < 1 || n > 65535 {
			return elbValidation("Health check port '%s' is not traffic-port or 1 to 65535", hc.Port)
		}
	}
	return nil
}

func (s *Server) nlbCreateTargetGroup(svc *awsService) func(http.ResponseWriter, *http.Request, *call, *awsQuery) {
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsQuery) {
		tg := &nlbTargetGroup{Name: q.get("Name"), Protocol: strings.ToUpper(q.get("Protocol")), TargetType: q.get("TargetType"),
			HealthCheck: nlbHealthCheck{Protocol: "TCP", Port: "traffic-port", Interval: 30, Timeout: 10, Healthy: 5, Unhealthy: 2}}
		port, vpc := q.get("Port"), q.get("VpcId")
		for _, t := range q.structs("Tags.member", "Key", "Value") {
			tg.Tags = append(tg.Tags, ec2Tag{Key: t["Key"], Value: t["Value"]})
		}
		e := healthCheckArgs(q, &tg.HealthCheck)
		if e == nil {
			e = q.done()
		}
		n, err := strconv.ParseInt(port, 10, 32)
		switch {
		case e != nil:
		case tg.Name == "" || len(tg.Name) > 32:
			e = elbValidation("Target group name %q must be 1 to 32 characters", tg.Name)
		case err != nil || n < 1 || n > 65535:
			e = elbValidation("Port %q must be 1 to 65535", port)
		case vpc != api.AWSVPCID:
			e = awsError(http.StatusBadRequest, "ValidationError", "The VPC ID '%s' is not found", vpc)
		case tg.TargetType != "" && tg.TargetType != "instance":
			e = elbValidation("fakecloud emulates target type instance only, not %q", tg.TargetType)
		}
		if e != nil {
			elbFail(w, e)
			return
		}
		tg.Port, tg.TargetType = int32(n), "instance"
		s.mu.Lock()
		defer s.mu.Unlock()
		if i := slices.IndexFunc(s.st.TargetGroups, func(x *nlbTargetGroup) bool { return x.Name == tg.Name }); i >= 0 {
			old := s.st.TargetGroups[i]
			if old.Protocol != tg.Protocol || old.Port != tg.Port || old.HealthCheck != tg.HealthCheck {
				elbFail(w, awsError(http.StatusBadRequest, "DuplicateTargetGroupName", "A target group with the same name '%s' exists, but with different settings", tg.Name))
				return
			}
			tg = old
		} else {
			tg.ARN = s.nlbArn("targetgroup", tg.Name, awsHash(16, tg.Name, time.Now().String()))
			s.st.TargetGroups = append(s.st.TargetGroups, tg)
			if err := s.saveLocked(); err != nil {
				saveFailed(w, err)
				return
			}
		}
		svc.answer(w, "CreateTargetGroup", struct {
			TargetGroups []tgWire `xml:"TargetGroups>member"`
		}{[]tgWire{s.tgWireLocked(tg)}})
	}
}

// nlbTargetGroupChange modifies, deletes, or (de)registers the targets
// of, a target group.
func (s *Server) nlbTargetGroupChange(svc *awsService, action string) func(http.ResponseWriter, *http.Request, *call, *awsQuery) {
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsQuery) {
		arn := q.get("TargetGroupArn")
		targets := q.structs("Targets.member", "Id", "Port")
		s.mu.Lock()
		tg := s.targetGroupLocked(arn)
		var hc nlbHealthCheck
		if tg != nil {
			hc = tg.HealthCheck
		}
		s.mu.Unlock()
		var e *awsErr
		if action == "ModifyTargetGroup" {
			e = healthCheckArgs(q, &hc)
		}
		if e == nil {
			e = q.done()
		}
		if e != nil {
			elbFail(w, e)
			return
		}
		users := func() []string { s.mu.Lock(); defer s.mu.Unlock(); return s.tgUsersLocked(arn) }()
		ref := ""
		if len(users) > 0 {
			ref = users[0]
		}
		f, ok := s.elbFault(w, r, c, ref)
		if !ok {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		tg = s.targetGroupLocked(arn)
		if tg == nil {
			elbFail(w, tgNotFound(arn))
			return
		}
		ignored := f != nil && f.Kind == api.FaultIgnore && f.Field == api.IgnoreBackends && (action == "RegisterTargets" || action == "DeregisterTargets")
		var body any
		switch action {
		case "ModifyTargetGroup":
			tg.HealthCheck = hc
			body = struct {
				TargetGroups []tgWire `xml:"TargetGroups>member"`
			}{[]tgWire{s.tgWireLocked(tg)}}
		case "DeleteTargetGroup":
			if len(s.tgUsersLocked(arn)) > 0 {
				elbFail(w, awsError(http.StatusBadRequest, "ResourceInUse", "Target group '%s' is currently in use by a listener or a rule", arn))
				return
			}
			s.st.TargetGroups = slices.DeleteFunc(s.st.TargetGroups, func(x *nlbTargetGroup) bool { return x == tg })
		default:
			for _, t := range targets {
				port := tg.Port
				if t["Port"] != "" {
					n, err := strconv.ParseInt(t["Port"], 10, 32)
					if err != nil {
						elbFail(w, elbValidation("Target port %q is not a number", t["Port"]))
						return
					}
					port = int32(n)
				}
				inst := s.instanceByIDLocked(t["Id"])
				if action == "RegisterTargets" && (inst == nil || inst.State == api.StateTerminated) {
					elbFail(w, awsError(http.StatusBadRequest, "InvalidTarget", "The following targets are not in a running state and cannot be registered: '%s'", t["Id"]))
					return
				}
				if ignored {
					continue
				}
				target := nlbTarget{ID: t["Id"], Port: port}
				tg.Targets = slices.DeleteFunc(tg.Targets, func(x nlbTarget) bool { return x == target })
				if action == "RegisterTargets" {
					tg.Targets = append(tg.Targets, target)
				}
			}
		}
		if err := s.nlbRederiveLocked(); err != nil {
			elbFail(w, elbValidation("%v", err))
			return
		}
		if err := s.saveLocked(); err != nil {
			saveFailed(w, err)
			return
		}
		svc.answer(w, action, body)
	}
}

func (s *Server) nlbDescribeTargetHealth(svc *awsService) func(http.ResponseWriter, *http.Request, *call, *awsQuery) {
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsQuery) {
		arn := q.get("TargetGroupArn")
		_ = q.structs("Targets.member", "Id", "Port")
		s.elbRead(w, r, c, q, "", func(*lbRecord) {
			tg := s.targetGroupLocked(arn)
			if tg == nil {
				elbFail(w, tgNotFound(arn))
				return
			}
			type health struct {
				Target struct {
					ID   string `xml:"Id"`
					Port int32
				}
				HealthCheckPort string
				TargetHealth    struct{ State string }
			}
			body := struct {
				Descriptions []health `xml:"TargetHealthDescriptions>member"`
			}{}
			for _, t := range tg.Targets {
				h := health{HealthCheckPort: tg.HealthCheck.Port}
				h.Target.ID, h.Target.Port = t.ID, t.Port
				h.TargetHealth.State = "healthy"
				if inst := s.instanceByIDLocked(t.ID); inst == nil || inst.State != api.StateRunning {
					h.TargetHealth.State = "unhealthy"
				} else if len(s.tgUsersLocked(arn)) == 0 {
					h.TargetHealth.State = "unused"
				}
				body.Descriptions = append(body.Descriptions, h)
			}
			svc.answer(w, "DescribeTargetHealth", body)
		})
	}
}

// nlbDescribeTags answers the tags of load balancers and target groups by
// ARN (a target group's are none here: the CCM tags only its load
// balancers), up to 20 at once as ELBv2 takes them.
func (s *Server) nlbDescribeTags(svc *awsService) func(http.ResponseWriter, *http.Request, *call, *awsQuery) {
	return func(w http.ResponseWriter, r *http.Request, c *call, q *awsQuery) {
		arns := q.list("ResourceArns.member")
		if len(arns) == 0 || len(arns) > 20 {
			elbFail(w, awsError(http.StatusBadRequest, "ValidationError", "1 validation error detected: Value at 'resourceArns' failed to satisfy constraint: Member must have length less than or equal to 20 and greater than or equal to 1"))
			return
		}
		s.elbRead(w, r, c, q, "", func(*lbRecord) {
			type tag struct{ Key, Value string }
			type described struct {
				ResourceArn string
				Tags        []tag `xml:"Tags>member"`
			}
			body := struct {
				Descriptions []described `xml:"TagDescriptions>member"`
			}{}
			for _, arn := range arns {
				d := described{ResourceArn: arn, Tags: []tag{}}
				switch rec := s.nlbLocked(arn); {
				case rec != nil && rec.NLB.ARN == arn:
					for _, t := range rec.NLB.Tags {
						d.Tags = append(d.Tags, tag{t.Key, t.Value})
					}
				case s.targetGroupLocked(arn) != nil:
				case strings.Contains(arn, ":targetgroup/"):
					elbFail(w, tgNotFound(arn))
					return
				default:
					elbFail(w, nlbNotFound(arn))
					return
				}
				body.Descriptions = append(body.Descriptions, d)
			}
			svc.answer(w, "DescribeTags", body)
		})
	}
}
