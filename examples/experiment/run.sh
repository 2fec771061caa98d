#!/bin/sh
# Runs the example: the weather service on 7001, the app on 8000 calling it through the
# experiment's proxy on 34001, then the experiment. FALLBACK=off ./run.sh shows it failing.
# EXPERIMENT=weather-promql.yaml ./run.sh runs the PromQL variant: start Prometheus first with
# prometheus.yml (it scrapes the app and the runner's --metrics 9464).
set -u
here=$(cd "$(dirname "$0")" && pwd)
faultline=${FAULTLINE:-faultline}
node "$here/weather-service.mjs" & service=$!
FALLBACK=${FALLBACK:-on} node "$here/app.mjs" & app=$!
trap 'kill $service $app 2>/dev/null' EXIT INT TERM
sleep 1
experiment=${EXPERIMENT:-weather.yaml}
metrics=""
[ "$experiment" = weather-promql.yaml ] && metrics="--metrics 9464"
$faultline experiment run "$here/$experiment" $metrics --html "${HTML:-report.html}" --junit "${JUNIT:-junit.xml}" --json "${JSON:-run.json}"
