# Reading /etc: users, hosts, certificates, locale, time zone.
getent passwd root | grep -q '^root:' && id -un >/dev/null && getent group root >/dev/null && echo "OK etc-users"
getent hosts localhost | grep -q . && python3 -c 'import socket; assert socket.gethostbyname("localhost") == "127.0.0.1"' \
  && echo "OK etc-hosts"
python3 -c '
import ssl; c = ssl.create_default_context(); s = c.cert_store_stats()
assert s["x509_ca"] > 0 or len(c.get_ca_certs()) > 0 or __import__("os").path.getsize("/etc/ssl/certs/ca-certificates.crt") > 0, s
' && test -r /etc/ssl/certs/ca-certificates.crt && echo "OK etc-certs"
LC_ALL=C.UTF-8 python3 -c 'import locale; locale.setlocale(locale.LC_ALL, ""); assert "UTF-8" in locale.nl_langinfo(locale.CODESET)' \
  && locale >/dev/null 2>&1 && echo "OK etc-locale"
test -r /etc/localtime && date +%Z | grep -q . && TZ=Europe/Paris date +%Z | grep -Eq 'CES?T' \
  && python3 -c 'import zoneinfo; zoneinfo.ZoneInfo("America/New_York")' && echo "OK etc-timezone"
