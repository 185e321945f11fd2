// find_secrets — the one secret detector. It serves both places where warden keeps secrets
// out: the audit log's redaction (secrets/redact.h replaces what it finds) and the environment
// scrubber (secrets/secret_detect.h: a variable whose value holds any finding is dropped), so a
// shape learnt once counts in both.
//
// A finding is a byte span of the text: the secret to hide. Everything else is kept byte for
// byte. A span may be empty (a private key marker with no key material after it): it still
// counts as a finding for the scrubber, and redaction has nothing to replace there.
//
// 1. Values of secret names (the scrubber's name rules: secret_detect.h is_secret_name), in the
//    forms that carry one in commands, code and configuration:
//      NAME=value   export NAME=value   --name=value   --name value   NAME: value
//      "NAME": "value"   'NAME': 'value'   name = "value"   os.environ["NAME"] = "value"
//      name: type = "value" (a Python annotation: the literal after `=`, not the type)
//      f("NAME", "value") (a quoted name first in a call: os.environ.setdefault, putenv)
//      name=('user', 'pw') (a tuple or list: every string after the first; a lone string)
//    The name is kept and the value redacted. An unquoted value ends at whitespace, a quote or
//    one of ; & | , } ) ] < > (an `Authorization: Bearer x`-style scheme word takes the next
//    word along, after blanks or a tab); a quoted value (" ' or `, backslash escapes honoured,
//    a Python prefix b r f u rb … and bash's $'…' allowed) is redacted between its quotes, up
//    to the end of the line when the quote does not close. Quoted pieces that touch form one
//    shell word (`'a'"b"c`): each piece is redacted; a value that starts unquoted ends at its
//    first quote (it may close an outer quote).
//    Not a literal, so kept: a value (bare, or in double quotes or backquotes) that begins with
//    an expansion — `$(…)`, `` `…` ``, `${…}`, `$NAME` — as in `API_KEY="$(cat k)"`: the
//    secret is not in the text, and the command must stay readable. A default written into the
//    expansion (`${X:-pw}`, `${X-pw}`, `${X:=pw}`, `${X=pw}`) is a literal and is redacted, for
//    a secret NAME= and for a secret X. Single quotes are literal: `PASSWORD='$ecret'` is
//    redacted.
//    With spaces around `=` a quoted value counts; a bare one counts for an all-capitals name
//    unless it holds ( [ or { (`PGPASSWORD = pw`), and for any name that starts its line,
//    as in an INI, .env or config file (`password = my secret` → the rest of the line),
//    unless the value holds ( [ { or is None/True/False/null. `TOKEN = get_token()` is code.
//    Between a quoted name and its `:` a line break may come (`{'PASSWORD'\n: '…'}`).
//    In a URL query (the name follows ? & or #) the credential-parameter rule of
//    secret_detect.h decides instead (`?access_token=`, `&sig=`, `?db_pass=`; not
//    `?author=`); `pwd=` counts in any case but the shell's own `PWD`.
//    .netrc's `password PASS` (the word at the start of a line, or after `login`/`machine` on
//    its line), and LDAP configuration's `bindpw PASS` / `rootpw PASS` at the start of a line.
// 2. Credentials in command lines (the command is the first word of a simple command, after
//    `sudo` (and its flags), `env`, `time`, `nohup`, `exec`, `command` and NAME=value words,
//    without its directory):
//      -u user:pass, --user user:pass (any command: the part after the first `:`)
//      -U user%pass, -Uuser%pass, --user user%pass, --user=user%pass (any command: the part
//        after the first `%`, Samba's form: smbclient, rpcclient, smbmap)
//      -pPASS (mysql*, mariadb*)   -p PASS (sshpass; docker|podman|nerdctl login; az login)
//      -a PASS (redis-cli)   -N PASS and -P PASS, spaced or glued (ssh-keygen)
//      -w PASS, spaced or glued (ldap* tools, or any command with a bind DN: an earlier `-D`
//        whose value holds `=`)
//      set NAME VALUE and config [flags] NAME VALUE with a secret NAME (aws configure set
//        aws_secret_access_key V, git config --global user.password V, npm config set
//        _authToken V, redis CONFIG SET requirepass V; a name ending in `helper` is not
//        secret here: `git config credential.helper store`)
//      echo|printf WORDS | sudo -S (or --stdin), | passwd --stdin, | chpasswd, or into a
//        command with --password-stdin: every word echoed
//    A value that is an expansion (above) is kept.
// 3. Credentials in code (Python and the like):
//      <name ending in Auth>(a, 'pw') (HTTPBasicAuth, BasicAuth, HTTPDigestAuth) and
//        <name ending in bind_s or bind>(dn, 'pw') (python-ldap): the second argument, when
//        it is a string literal; <name ending in Client>(a, 'token') (Twilio's
//        Client(account_sid, auth_token)): the second argument when it is a string literal of
//        at least 16 characters without blanks. The first argument is a literal or a (dotted)
//        name.
//      os.environ.get('X') or 'pw', os.getenv('X') or 'pw', os.environ['X'] or 'pw': the
//        fallback literal, when X is a secret name or the line assigns to one
//        (`password = os.environ.get('PGX') or 'pw'`).
// 4. Shapes that are secrets whatever their name, wherever they appear (secret_detect.h
//    find_secret_token and the rules below): well-known token formats and JWTs (the whole
//    token; Mailgun's `key-` + 32 letters and digits among them), private key blocks (below),
//    the password of a URL's userinfo (`scheme://user:pass@` → `scheme://user:[REDACTED]@`),
//    a userinfo without password that looks like a key (≥ 20 characters mixing letters and
//    digits: a Sentry DSN), the path of a webhook URL after `/hooks/`, `/webhooks/` or a
//    `hooks.` host, and:
//      a Telegram bot token: 6 to 12 digits, `:`, then at least 30 of A-Z a-z 0-9 _ -
//        mixing two of lowercase, uppercase and digits, at a word boundary or after `bot`
//        (https://api.telegram.org/bot<token>/sendMessage): the whole token;
//      HTTP Basic credentials: the word Basic (any case), blanks, then base64 that decodes to
//        printable text holding a `:` (user:password): the base64;
//      Twilio `AC` or `SK` + 32 hex, `:`, then 32 letters and digits (account or key id, then
//        its secret): the part after the `:`;
//      a Mailgun key of the newer form: 32 hex, `-`, 8 hex, `-`, 8 hex;
//      a .pgpass line `host:port:database:user:password` (port digits or `*`, the fields
//        without blanks or quotes, one word): the password;
//      a text (or a JSON string) that is, blanks aside, exactly 32 hex digits mixing letters
//        and digits: all of it (an API key on its own). 32 hex inside longer text (an MD5
//        sum in a command, a UUID's digits) is kept.
//
// Private key blocks (`-----BEGIN … PRIVATE KEY-----`, secret_detect.h find_private_key_block):
//   - With an `-----END` marker after it and only key material between them (base64, blanks,
//     line breaks and the `:` `,` `-` `.` of PEM headers such as `Proc-Type: 4,ENCRYPTED`; at
//     most k_max_key_material_bytes): the material between the markers (the markers are kept).
//   - Otherwise the block is bounded, so a marker cannot hide the command around it:
//     inside a quoted string (a shell quote state kept from the start of the piece: ' and ",
//     backslash escapes outside single quotes) whose closing quote comes within
//     k_max_key_block_bytes: up to that quote; outside one: the key lines that follow, at most
//     k_max_key_block_bytes — the rest of the marker's line and each next line that is, blanks
//     aside, only base64 characters and either at least 40 long or ending in `=` (PEM lines are
//     64 or 70); the first other line ends the block, and text after the marker on its line
//     that is not key material is kept (`echo -----BEGIN PRIVATE KEY----- && rm -rf ~`).
//     So a key pasted without its END line may leave its last short line (under 40 characters,
//     no `=`) and anything past 4 KiB visible.
//
// JSON: when the whole text is valid JSON, only the content of string literals is ever
// replaced (each string is scanned on its own, with its escapes decoded; a key that is secret
// by name has its string value redacted whole, and every string inside its array or object
// value, keys included; numbers and other non-string values are kept), and never part of an
// escape sequence, so the result is valid JSON again. Other text is scanned as one piece,
// backslash escapes decoded the same way (it is often JSON-like). Spans are in the raw text:
// every cut falls next to an ASCII byte or at the end of a string, so valid UTF-8 stays valid.
// A `[REDACTED]` already in the text counts as one whole value, so redacting ordinary text
// twice changes nothing more.
//
// Not covered: a secret in a positional argument not listed above (`htpasswd -b f user PASS`),
// `mysql -p` with other flags glued before it (`-upPASS`), secrets split across pieces of a
// non-JSON structure, and encodings other than backslash escapes (base64 except Basic, URL
// encoding of a name).
//
// Over-redaction is the accepted cost: a name that merely contains a marker loses its value
// too (`TOKENIZERS_PARALLELISM=false`, `session_id=…`, the where-credentials-live variables
// such as `HF_HOME=…`), a Python assignment of a plain name to a secret-named variable at the
// start of a line (`password = pw_from_vault`) loses its right-hand side, and a line that
// starts with the word `password` loses its next word. Ordinary commands keep everything:
// `git log`, `ls -la`, a comment that mentions a password, a UUID, a 40-hex commit id.
//
// Cost: linear in the text (inputs up to a few MiB; no regex; every backward look is bounded
// by k_max_look_back or the name limit, every forward look by a format's length or a cached
// position); memory about 10 bytes per input byte while it runs. Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace warden::secrets {

/// A finding: the byte range [begin, end) of a secret in the scanned text.
struct secret_span {
  std::size_t begin = 0, end = 0;
};

/// How far an unterminated private key block reaches at most, after its BEGIN marker (bytes).
/// 4 KiB holds an RSA-4096 PEM key (about 3.2 KiB of base64).
inline constexpr std::size_t k_max_key_block_bytes = 4096;
/// The most key material between BEGIN and END markers that is taken as one block (bytes).
inline constexpr std::size_t k_max_key_material_bytes = 64 * 1024;

/// Every finding in `text` (rules above), in no particular order; spans may overlap. Empty
/// when the text holds no secret. Never throws except std::bad_alloc.
std::vector<secret_span> find_secrets(std::string_view text);

}  // namespace warden::secrets
