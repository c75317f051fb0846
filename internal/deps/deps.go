// Package deps pins the modules the project uses until their packages import them.
package deps

import (
	_ "github.com/VictoriaMetrics/metrics"
	_ "github.com/expr-lang/expr"
	_ "github.com/tidwall/gjson"
	_ "github.com/tidwall/sjson"
	_ "gopkg.in/yaml.v3"
	_ "modernc.org/sqlite"
)
