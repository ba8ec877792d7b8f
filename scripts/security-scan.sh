#!/bin/sh
# A manual check (docs/testing.md, "Scanners"): Debian's sqlmap and wapiti against a Kopek of this
# checkout on the embedded store, on 127.0.0.1 only, each part bounded in time.
#
#   apt-get install -y sqlmap wapiti && npm run build && timeout 720 scripts/security-scan.sh
#
# It starts `node dist/cli.js serve` on 127.0.0.1:$PORT (3939) with a new DATA_DIR, creates a
# customer, a product, a redirect and a card subscription and a checkout with the sandbox shop the
# first start prints, signs in to the cabinet, then runs sqlmap (level 3, risk 2) on the JSON API's
# bodies, queries and path parameters and on the cabinet's list filters with the session, and wapiti
# (the modules below) on the cabinet and the hosted pages. Reports go to $OUT (/tmp/kopek-scan).
# It stops the server it started when it ends.
set -eu

PORT=${PORT:-3939}
OUT=${OUT:-/tmp/kopek-scan}
# sqlmap: seconds per target (ten targets). wapiti: seconds of crawling, then each of its twelve
# modules attacks for at most WAPITI_ATTACK_SECONDS. The defaults keep the whole run near 9 minutes.
SQLMAP_SECONDS=${SQLMAP_SECONDS:-30}
WAPITI_SECONDS=${WAPITI_SECONDS:-60}
WAPITI_ATTACK_SECONDS=${WAPITI_ATTACK_SECONDS:-12}
# SKIP_SQLMAP=1 runs wapiti alone.
SKIP_SQLMAP=${SKIP_SQLMAP:-}
B="http://127.0.0.1:$PORT"
ROOT=$(cd "$(dirname "$0")/.." && pwd)

rm -rf "$OUT" && mkdir -p "$OUT/data"
HOST=127.0.0.1 PORT=$PORT DATA_DIR="$OUT/data" PUBLIC_URL="$B" NOTIFICATIONS=off LOG_LEVEL=warn \
  node "$ROOT/dist/cli.js" serve > "$OUT/serve.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 1 60); do
  grep -q '^Secret key:' "$OUT/serve.log" 2>/dev/null && break
  sleep 0.5
done
SHOP=$(sed -n 's/^Shop id: *\([0-9]*\).*/\1/p' "$OUT/serve.log")
KEY=$(sed -n 's/^Secret key: *\([0-9a-f]*\).*/\1/p' "$OUT/serve.log")
[ -n "$SHOP" ] && [ -n "$KEY" ] || { echo "no sandbox shop in $OUT/serve.log" >&2; exit 1; }

# One of each thing the scanners look at.
J='Content-Type: application/json'
api() { curl -s -u "$SHOP:$KEY" -H "$J" "$B$1" -d "$2"; }
api /customers '{"email":"jane@example.com","ip":"203.0.113.7"}' > "$OUT/customer.json"
api /products '{"name":"Scan","description":"A product","currency":"USD","amount":100,"language":"en"}' > "$OUT/product.json"
PLAN='"plan":{"title":"Gold","currency":"USD","plan":{"amount":500,"interval":1,"interval_unit":"month"}}'
api /subscriptions "{$PLAN,\"tracking_id\":\"trk-1\",\"return_url\":\"https://shop.example/back\"}" > "$OUT/sub-redirect.json"
CARD='"card":{"number":"4200000000000000","verification_value":"123","holder":"Jane Doe","exp_month":"01","exp_year":"2039"}'
api /subscriptions "{\"customer\":{\"email\":\"jane@example.com\",\"ip\":\"203.0.113.7\"},$PLAN,$CARD,\"tracking_id\":\"trk-2\"}" > "$OUT/sub-card.json"
api /ctp/api/checkouts '{"checkout":{"transaction_type":"payment","order":{"amount":500,"currency":"USD","description":"Order 1"}}}' > "$OUT/checkout.json"
field() { sed -n "s/.*\"$2\":\"\([^\"]*\)\".*/\1/p" "$OUT/$1" | head -1; }
CST=$(field customer.json id)
PRD=$(field product.json id)
SUB=$(field sub-card.json id)
SBT=$(field sub-redirect.json token)
CTP=$(field checkout.json token)

# The cabinet's session: a cookie header for sqlmap, a cookie file for wapiti (which keeps the CSRF
# cookie it is given along with it, so its forms post as a browser's would).
JAR="$OUT/jar.txt"
T=$(curl -s -c "$JAR" "$B/cabinet/sign-in" | sed -n 's/.*name="_csrf" value="\([^"]*\)".*/\1/p')
curl -s -b "$JAR" -c "$JAR" -o /dev/null "$B/cabinet/sign-in" --data-urlencode "_csrf=$T" \
  --data-urlencode "shop_id=$SHOP" --data-urlencode "secret_key=$KEY" --data-urlencode "next=/cabinet"
SESSION=$(awk '$6 == "kopek_session" { print $7 }' "$JAR")
[ -n "$SESSION" ] || { echo "cabinet sign-in failed" >&2; exit 1; }
printf '{"127.0.0.1": {"/cabinet": {"kopek_session": {"version": 0, "value": "%s", "expires": null, "secure": false, "port": null}}}}\n' \
  "$SESSION" > "$OUT/cookies.json"

# sqlmap: every target bounded; --batch answers its questions with the defaults.
sqlmap_on() {
  name=$1; shift
  echo "sqlmap: $name"
  timeout "$SQLMAP_SECONDS" sqlmap --batch --level 3 --risk 2 --flush-session --disable-coloring \
    --output-dir "$OUT/sqlmap" "$@" > "$OUT/sqlmap-$name.log" 2>&1 || true
  grep -E 'is vulnerable|appears to be .*injectable|Parameter: ' "$OUT/sqlmap-$name.log" || true
}
BASIC="--auth-type=Basic --auth-cred=$SHOP:$KEY"
# shellcheck disable=SC2086
[ -n "$SKIP_SQLMAP" ] || {
  sqlmap_on customers -u "$B/customers" $BASIC -H "$J" --data '{"email":"jane@example.com","ip":"203.0.113.7","first_name":"Jane","country":"US","zip":"12345"}'
  sqlmap_on products -u "$B/products" $BASIC -H "$J" --data '{"name":"Scan","description":"A product","currency":"USD","amount":100,"language":"en"}'
  sqlmap_on subscription-redirect -u "$B/subscriptions" $BASIC -H "$J" --data "{\"plan\":{\"title\":\"Gold\",\"currency\":\"USD\",\"plan\":{\"amount\":500,\"interval\":1,\"interval_unit\":\"month\"}},\"tracking_id\":\"trk-9\"}"
  sqlmap_on lists -u "$B/subscriptions?limit=10&tracking_id=trk-2&state=active&customer_id=$CST&starting_after=$SUB" $BASIC
  sqlmap_on tracking-id -u "$B/v2/transactions/tracking_id/trk-2*" $BASIC
  sqlmap_on checkouts -u "$B/ctp/api/checkouts" $BASIC -H "$J" --data '{"checkout":{"transaction_type":"payment","order":{"amount":500,"currency":"USD","description":"Order 1"},"settings":{"language":"en"}}}'
  sqlmap_on gateway-payment -u "$B/transactions/payments" $BASIC -H "$J" --data '{"request":{"amount":1999,"currency":"EUR","description":"Order","tracking_id":"trk-7","credit_card":{"number":"4200000000000000","verification_value":"123","holder":"John Doe","exp_month":"01","exp_year":"2039"}}}'
  sqlmap_on cabinet-subscriptions -u "$B/cabinet/subscriptions?email=jane&plan=Gold&state=active&tracking_id=trk-2" --cookie "kopek_session=$SESSION" --skip kopek_session
  sqlmap_on cabinet-payments -u "$B/cabinet/payments?status=successful&type=payment&tracking_id=trk-2&from=2020-01-01&to=2039-01-01" --cookie "kopek_session=$SESSION" --skip kopek_session
  sqlmap_on cabinet-customers -u "$B/cabinet/customers?email=jane&id=$CST" --cookie "kopek_session=$SESSION" --skip kopek_session
}

# wapiti. Debian's 3.0.4 on Python 3.11 cannot compile its own exclusion patterns (a global regex
# flag after the start); this runs it with the pattern compiler put right.
cat > "$OUT/wapiti.py" <<'PY'
import re, sys
import wapitiCore.net.crawler as crawler
crawler.wildcard_translate = lambda p: re.compile('(?ms)' + ''.join('.*' if c == '*' else re.escape(c) for c in p) + r'\Z')
from wapitiCore.main.wapiti import wapiti_main
sys.argv[0] = 'wapiti'
sys.exit(wapiti_main())
PY
echo "wapiti"
timeout $((WAPITI_SECONDS + 12 * WAPITI_ATTACK_SECONDS + 60)) /usr/bin/python3 "$OUT/wapiti.py" -u "$B/" --scope folder -c "$OUT/cookies.json" \
  -s "$B/cabinet" -s "$B/cabinet/subscriptions?email=jane&plan=Gold" -s "$B/cabinet/payments?status=failed" \
  -s "$B/cabinet/customers?email=jane" -s "$B/cabinet/language?to=ru&back=/cabinet/payments" \
  -s "$B/cabinet/sign-in?next=/cabinet/payments" -s "$B/products/$PRD/pay" -s "$B/v2/confirm_order/$PRD/$SHOP" \
  -s "$B/v2/checkout?token=$CTP" -s "$B/v2/checkout?token=$SBT" \
  -x "$B/cabinet/sign-out" -x "$B/cabinet/settings*" -x "$B/cabinet/test-clock*" -x "$B/docs*" \
  -m xss,sql,exec,file,crlf,ssrf,redirect,csrf,permanentxss,http_headers,cookieflags,csp \
  -d 3 --max-scan-time "$WAPITI_SECONDS" --max-attack-time "$WAPITI_ATTACK_SECONDS" --endpoint http://127.0.0.1:9/ --no-bugreport \
  -f txt -o "$OUT/wapiti.txt" > "$OUT/wapiti.log" 2>&1 || true
sed -n '/Summary of vulnerabilities/,/^\*\*\*/p' "$OUT/wapiti.txt"
echo "500s seen by wapiti: $(grep -c 'Received a HTTP 500' "$OUT/wapiti.log" || true)"
echo "server errors logged: $(grep -c '"level":50' "$OUT/serve.log" || true)"
echo "reports in $OUT"
