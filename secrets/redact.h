// redact_secrets — hides the secrets in free text before it is stored (the audit log's tool
// arguments and reasons, store/call_records.h), with the rules of the environment scrubber
// (secrets/secret_detect.h), so what warden keeps out of a tool's environment it also keeps out
// of its database.
//
// Each secret is replaced by `[REDACTED]`; everything else is kept byte for byte:
//
// 1. A value whose name the scrubber drops by name (is_secret_name), in the forms that carry
//    one in commands and code:
//      NAME=value   export NAME=value   --name=value   --name value   NAME: value
//      "NAME": "value"   'NAME': 'value'   name = "value"   os.environ["NAME"] = "value"
//      name: type = "value" (a Python annotation: the literal after `=`, not the type)
//      f("NAME", "value") (a quoted name first in a call: os.environ.setdefault, putenv)
//    The name is kept and the value redacted. An unquoted value ends at whitespace, a quote or
//    one of ; & | , } ) ] < > (an `Authorization: Bearer x`-style scheme word takes the next
//    word along, after blanks or a tab); a quoted value (" ' or `, backslash escapes honoured,
//    a Python prefix b r f u rb … and bash's $'…' allowed) is redacted between its quotes, up
//    to the end of the line when the quote does not close. Quoted pieces that touch form one
//    shell word (`'a'"b"c`): each piece is redacted; a value that starts unquoted ends at its
//    first quote (it may close an outer quote). With spaces around `=` a quoted value counts,
//    and a bare one only for an all-capitals name unless it holds ( [ or { (`PGPASSWORD = pw`
//    is redacted, `TOKEN = get_token()` and `token = x` are code, not secrets). Between a
//    quoted name and its `:` a line break may come (`{'PASSWORD'\n: '…'}`). In URL
//    queries (after ? & # ;) the scrubber's credential-parameter names count too (`sig=`,
//    `pw=`), and `pwd=` counts in any case but the shell's own `PWD`.
//    Credential flags of common commands: `-u user:pass` and `--user user:pass` (any command:
//    the part after the first `:`; without a colon nothing), `-pPASS` of mysql*/mariadb*,
//    `-p PASS` of sshpass and of `docker|podman|nerdctl login` (the command is the first word
//    after the last newline ; | & ( or backquote, `sudo` and NAME=value words skipped, at most
//    256 bytes back), and .netrc's `password PASS` (the word at the start of a line, or after
//    `login`/`machine` on its line).
// 2. Whatever the scrubber flags by value, wherever it appears: well-known token formats and
//    JWTs (the whole token), private key blocks (the key material between the BEGIN and END
//    markers, which are kept; to the end of the text when END is missing), the password of a
//    URL's userinfo (`scheme://user:pass@` → `scheme://user:[REDACTED]@`), a userinfo without
//    password that looks like a key (≥ 20 characters mixing letters and digits: a Sentry
//    DSN), and the path of a webhook URL after `/hooks/`, `/webhooks/` or a `hooks.` host.
//
// Not covered: a secret in a positional argument (`htpasswd -b f user PASS`, `mysql -p` with
// other flags glued before it such as `-upPASS`), a bare value after ` = ` under a lowercase
// name (`password = hunter2` in an INI file), secrets split across pieces of a non-JSON
// structure, and encodings other than backslash escapes (base64, URL-encoding of the name).
//
// Over-redaction is the accepted cost, as in the scrubber: a name that merely contains a
// marker loses its value too (`TOKENIZERS_PARALLELISM=false`, `session_id=…`, `author=…`,
// and the where-credentials-live variables such as `HF_HOME=…`). `PWD=/x`, `sk-learn` and
// `hf_transfer` are kept. A line that starts with the word `password` loses its next word.
//
// JSON: when the whole text is valid JSON, only the content of string literals is ever
// replaced (each string is scanned on its own, with its escapes decoded; a key that is secret
// by name has its string value redacted whole, and every string inside its array or object
// value, keys included; numbers and other non-string values are kept),
// and never part of an escape sequence, so the result is valid JSON again. Other text is
// scanned as one piece, backslash escapes decoded the same way (it is often JSON-like).
// Valid UTF-8 stays valid: every cut falls next to an ASCII byte or at the end of a string.
// A `[REDACTED]` already there counts as one whole value, so redacting ordinary text twice
// changes nothing more (text where rules overlap, such as a key block whose END marker is also
// a secret value, may lose a little more the second time).
//
// Cost: linear in the text (inputs up to a few MiB; no regex); memory about 10 bytes per input
// byte while it runs. Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace warden::secrets {

/// What replaces each secret.
inline constexpr std::string_view k_redacted = "[REDACTED]";

/// `text` with its secrets replaced by k_redacted (rules above). Never throws except
/// std::bad_alloc.
std::string redact_secrets(std::string_view text);

}  // namespace warden::secrets
