#!/usr/bin/env bash
# Starts the mail servers the email tests talk to, on loopback ports of
# their own, with everything they keep under one directory:
#   dovecot  IMAP 127.0.0.1:10143 (plain) and 127.0.0.1:10993 (TLS, a
#            certificate from a private CA: $dir/tls/ca.pem), LMTP 127.0.0.1:10024;
#            any user name signs in with the password "secret" and gets a
#            maildir of its own, so each test makes up mailboxes of its own
#   postfix  SMTP 127.0.0.1:10025, handing every message to dovecot's LMTP,
#            so a mail the service sends arrives in the recipient's mailbox
# Both run from configuration files in $dir, not the system's (postfix
# needs one line in the system's main.cf to allow that). It prints the
# TEST_* variables the tests read, for `eval`. Idempotent:
# a server already answering on its port is left as it is.
set -euo pipefail
dir="${SUPPORTDESK_TEST_MAIL_DIR:-/tmp/supportdesk-test-mail}"

answering() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

mkdir -p "$dir/tls" "$dir/run" "$dir/mail"
chown mail:mail "$dir/mail"
# A private CA and a server certificate it signed, as a company's own mail
# server may have: the tests trust the CA (rustls refuses a self-signed CA
# certificate used as the server's own).
if [ ! -f "$dir/tls/cert.pem" ]; then
  (
    cd "$dir/tls"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=supportdesk test CA" \
      -keyout ca-key.pem -out ca.pem >/dev/null 2>&1
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
      -keyout key.pem -out server.csr >/dev/null 2>&1
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 3650 \
      -extfile server.ext -out cert.pem >/dev/null 2>&1
  )
fi

if ! answering 10143; then
  cat >"$dir/dovecot.conf" <<CONF
base_dir = $dir/run
state_dir = $dir/run/state
log_path = $dir/dovecot.log
protocols = imap lmtp
listen = 127.0.0.1
ssl = yes
ssl_cert = <$dir/tls/cert.pem
ssl_key = <$dir/tls/key.pem
disable_plaintext_auth = no
auth_mechanisms = plain login
first_valid_uid = 8
# support+<token>@desk is delivered to support@desk's mailbox, as a real
# desk's server would.
recipient_delimiter = +
mail_location = maildir:$dir/mail/%u
mail_uid = mail
mail_gid = mail
passdb {
  driver = static
  args = password=secret
}
userdb {
  driver = static
  args = uid=mail gid=mail home=$dir/mail/%u allow_all_users=yes
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = 10143
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = 10993
    ssl = yes
  }
}
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = 10024
  }
}
protocol lmtp {
  postmaster_address = postmaster@localhost
}
CONF
  mkdir -p "$dir/run/state"
  dovecot -c "$dir/dovecot.conf"
fi

if ! answering 10025; then
  pf="$dir/postfix"
  mkdir -p "$pf/queue" "$pf/data"
  chown postfix "$pf/data"
  # postfix runs from another configuration directory only when the
  # system's configuration names it.
  postconf -e "alternate_config_directories = $pf"
  # The system's master.cf less its smtp listener, plus one on our port.
  grep -v '^smtp[[:space:]]\+inet' /etc/postfix/master.cf >"$pf/master.cf"
  echo "127.0.0.1:10025 inet n - n - - smtpd" >>"$pf/master.cf"
  cat >"$pf/main.cf" <<CONF
compatibility_level = 3.6
queue_directory = $pf/queue
data_directory = $pf/data
inet_interfaces = loopback-only
inet_protocols = ipv4
mydestination =
myhostname = localhost
mynetworks = 127.0.0.0/8
smtpd_relay_restrictions = permit_mynetworks, reject
default_transport = lmtp:inet:127.0.0.1:10024
relay_transport = lmtp:inet:127.0.0.1:10024
maillog_file = $dir/postfix.log
maillog_file_prefixes = $dir
smtputf8_enable = no
CONF
  # Without a syslog, postfix says why it failed only in its log file.
  postfix -c "$pf" set-permissions >/dev/null 2>&1 || true
  postfix -c "$pf" start >/dev/null 2>&1 || { tail -n 20 "$dir/postfix.log" >&2; exit 1; }
fi

for port in 10143 10993 10024 10025; do
  for _ in $(seq 1 30); do answering "$port" && break; sleep 0.2; done
  answering "$port" || { echo "mail test server: nothing answers on 127.0.0.1:$port" >&2; exit 1; }
done
# What the tests read (eval'd by .ci/run).
cat <<VARS
export TEST_IMAP_HOST=127.0.0.1 TEST_IMAP_PORT=10143 TEST_IMAPS_PORT=10993
export TEST_IMAP_CA_FILE=$dir/tls/ca.pem TEST_MAIL_PASSWORD=secret
export TEST_SMTP_HOST=127.0.0.1 TEST_SMTP_PORT=10025
VARS
