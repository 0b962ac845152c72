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

package migration

import (
	"fmt"
	"html"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/ccm-harness/cluster"
)

// Layout of the picture, in pixels.
const (
	svgWidth   = 1400
	labelWidth = 360
	laneHeight = 18
	laneGap    = 4
	groupGap   = 14
)

// Colours by what runs the controller; violations drawn over them.
var kindColour = map[string]string{cluster.KubeControllerManager: "#4c78a8", cluster.CloudControllerManager: "#54a24b"}

const (
	conflictColour = "#e45756"
	unownedColour  = "#f58518"
	gapColour      = "#d0d0d0"
)

// WriteSVG draws a swimlane per controller: a lane per process that ran
// it, a bar where it did, grey where it ran nowhere, and the violations of
// b in red (two at once) and orange (unowned too long). Numbered marks on
// the time axis are the scenario's events, listed under the picture.
func (t *Timeline) WriteSVG(w io.Writer, b Bounds) error {
	violations := t.Check(b)
	end := int64(1)
	if n := len(t.Samples); n > 0 && t.Samples[n-1].AtMs > 0 {
		end = t.Samples[n-1].AtMs
	}
	plot := float64(svgWidth - labelWidth - 20)
	x := func(at int64) float64 { return labelWidth + float64(at)/float64(end)*plot }

	var body strings.Builder
	y := 96
	for _, c := range t.shown(violations) {
		top := y
		fmt.Fprintf(&body, `<text x="8" y="%d" class="ctrl">%s</text>`+"\n", y+13, html.EscapeString(c))
		y += laneHeight + laneGap
		for _, p := range t.Processes {
			spans := t.spans(func(s Sample) bool { return slices.Contains(s.Running[p.Name], c) })
			if len(spans) == 0 {
				continue
			}
			fmt.Fprintf(&body, `<text x="20" y="%d" class="lane">%s</text>`+"\n", y+13, html.EscapeString(p.Name+" · "+p.Binary))
			for _, sp := range spans {
				fmt.Fprintf(&body, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s ran %s from %s to %s</title></rect>`+"\n",
					x(sp[0]), y, x(sp[1])-x(sp[0]), laneHeight, kindColour[p.Kind], html.EscapeString(p.Name), html.EscapeString(c), ms(sp[0]), ms(sp[1]))
			}
			y += laneHeight + laneGap
		}
		if slices.Contains(t.Migrated, c) {
			fmt.Fprintf(&body, `<text x="20" y="%d" class="lane">(no process)</text>`+"\n", y+13)
			owned := false
			for _, sp := range t.spans(func(s Sample) bool {
				has := len(s.owners(c)) > 0
				owned = owned || has
				return owned && !has
			}) {
				fmt.Fprintf(&body, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s ran nowhere from %s to %s</title></rect>`+"\n",
					x(sp[0]), y, x(sp[1])-x(sp[0]), laneHeight, gapColour, html.EscapeString(c), ms(sp[0]), ms(sp[1]))
			}
			y += laneHeight + laneGap
		}
		for _, v := range violations {
			if v.Controller != c {
				continue
			}
			colour := conflictColour
			if v.Kind == "unowned" {
				colour = unownedColour
			}
			fmt.Fprintf(&body, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="0.45" stroke="%s" class="violation"><title>%s</title></rect>`+"\n",
				x(v.FromMs), top, max(x(v.ToMs)-x(v.FromMs), 3), y-top-laneGap, colour, colour, html.EscapeString(v.String()))
		}
		y += groupGap
	}
	axis := y
	y += 30

	// Time axis, then the events' marks and their list.
	var tail strings.Builder
	fmt.Fprintf(&tail, `<line x1="%d" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>`+"\n", labelWidth, axis, x(end), axis)
	step := int64(10_000)
	if end > 300_000 {
		step = 60_000
	}
	for at := int64(0); at <= end; at += step {
		fmt.Fprintf(&tail, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/><text x="%.1f" y="%d" text-anchor="middle">%ds</text>`+"\n",
			x(at), axis, x(at), axis+5, x(at), axis+18, at/1000)
	}
	for i, e := range t.Events {
		// Events come in bursts (stop, start, start): three rows of
		// numbers keep neighbours readable.
		fmt.Fprintf(&tail, `<line x1="%.1f" y1="84" x2="%.1f" y2="%d" stroke="#999" stroke-dasharray="3,3"/><text x="%.1f" y="%d" text-anchor="middle" class="ev">%d</text>`+"\n",
			x(e.AtMs), x(e.AtMs), axis, x(e.AtMs), 60+(i%3)*11, i+1)
		fmt.Fprintf(&tail, `<text x="8" y="%d" class="ev">%d. %s  %s</text>`+"\n", y, i+1, ms(e.AtMs), html.EscapeString(e.Text))
		y += 16
	}
	for _, v := range violations {
		fmt.Fprintf(&tail, `<text x="8" y="%d" fill="%s">%s</text>`+"\n", y, conflictColour, html.EscapeString(v.String()))
		y += 16
	}

	verdict := "no violation"
	if len(violations) > 0 {
		verdict = fmt.Sprintf("%d violation(s)", len(violations))
	}
	var out strings.Builder
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", svgWidth, y+10)
	out.WriteString(`<style>.ctrl{font-weight:bold}.lane{fill:#333}.ev{fill:#555;font-size:11px}.title{font-size:16px;font-weight:bold}</style>` + "\n")
	out.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(&out, `<text x="8" y="22" class="title">Leader migration: controllers by process (lease %s)</text>`+"\n", html.EscapeString(t.LeaderName))
	fmt.Fprintf(&out, `<text x="8" y="42">lanes sampled every %dms, conflicts from each process's log; unowned bound %s; %s. Blue: kube-controller-manager, green: cloud-controller-manager, grey: no process, red: two at once, orange: unowned too long.</text>`+"\n",
		t.EveryMs, b.Unowned, verdict)
	out.WriteString(body.String())
	out.WriteString(tail.String())
	out.WriteString("</svg>\n")
	_, err := io.WriteString(w, out.String())
	return err
}

// shown are the controllers worth a swimlane: the migrated ones, those a
// CCM ran, and any with a violation. The rest of kube-controller-manager's
// forty would bury them.
func (t *Timeline) shown(violations []Violation) []string {
	out := append([]string(nil), t.Migrated...)
	add := func(c string) {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	ccm := map[string]bool{}
	for _, p := range t.Processes {
		ccm[p.Name] = p.Kind == cluster.CloudControllerManager
	}
	for _, c := range t.controllers() {
		for _, s := range t.Samples {
			for p, ctrls := range s.Running {
				if ccm[p] && slices.Contains(ctrls, c) {
					add(c)
				}
			}
		}
	}
	for _, v := range violations {
		if v.Controller != "" {
			add(v.Controller)
		}
	}
	return out
}

// spans are the [from, to] windows, in milliseconds, of consecutive
// samples where in holds; each reaches to the next sample.
func (t *Timeline) spans(in func(Sample) bool) [][2]int64 {
	var out [][2]int64
	open := false
	for i, s := range t.Samples {
		next := s.AtMs
		if i+1 < len(t.Samples) {
			next = t.Samples[i+1].AtMs
		}
		if !in(s) {
			open = false
			continue
		}
		if open {
			out[len(out)-1][1] = next
			continue
		}
		out = append(out, [2]int64{s.AtMs, next})
		open = true
	}
	return out
}
