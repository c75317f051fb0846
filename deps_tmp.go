package hookwatch

import (
	_ "github.com/VictoriaMetrics/metrics"
	_ "github.com/expr-lang/expr"
	_ "github.com/tidwall/gjson"
	_ "github.com/tidwall/sjson"
	_ "gopkg.in/yaml.v3"
	_ "modernc.org/sqlite"
)
