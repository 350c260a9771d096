// prometheus-check: Prometheus' own parser and linter over a metrics exposition, for Weft's metrics tests.
// It reads the text format on stdin, parses it with github.com/prometheus/common/expfmt (what Prometheus' client
// libraries and promtool use), lints it with promlint (`promtool check metrics`), and prints the families and the
// problems as JSON. A parse error exits 1 with the parser's message.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

type sample struct {
	Labels map[string]string `json:"labels"`
	Value  any               `json:"value"`
	Count  uint64            `json:"count,omitempty"`
	Sum    float64           `json:"sum,omitempty"`
}

type family struct {
	Type    string   `json:"type"`
	Help    string   `json:"help"`
	Samples []sample `json:"samples"`
}

// number is v, or its name when JSON has none (NaN, ±Inf).
func number(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	return v
}

func main() {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	list := make([]*dto.MetricFamily, 0, len(families))
	out := map[string]family{}
	for name, f := range families {
		list = append(list, f)
		fam := family{Type: f.GetType().String(), Help: f.GetHelp()}
		for _, m := range f.GetMetric() {
			s := sample{Labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.Labels[l.GetName()] = l.GetValue()
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				s.Value = number(m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				s.Value = number(m.GetGauge().GetValue())
			case dto.MetricType_HISTOGRAM:
				s.Count = m.GetHistogram().GetSampleCount()
				s.Sum = m.GetHistogram().GetSampleSum()
			case dto.MetricType_UNTYPED:
				s.Value = number(m.GetUntyped().GetValue())
			}
			fam.Samples = append(fam.Samples, s)
		}
		out[name] = fam
	}
	sort.Slice(list, func(i, j int) bool { return list[i].GetName() < list[j].GetName() })
	problems, err := promlint.NewWithMetricFamilies(list).Lint()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	texts := []string{}
	for _, p := range problems {
		texts = append(texts, p.Metric+": "+p.Text)
	}
	if err := json.NewEncoder(os.Stdout).Encode(map[string]any{"families": out, "problems": texts}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
