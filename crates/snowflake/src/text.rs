//! The text forms of an ID: one definition of each alphabet, its encoder and
//! its parser, so that the CLI, the HTTP API, serde and the page's JSON all
//! write and read IDs the same way.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use core::str::FromStr;

use crate::digits;
use crate::error::{Error, Repr, TextProblem};
use crate::id::Id;

/// What defines a text form. Every property of a form is read from its
/// entry in the table of [`TextForm`]; nothing else matches on the form, so
/// a new form is one entry there (and its line in `testdata/vectors.json`).
struct Spec {
    name: &'static str,
    /// The digits, in the order of their values; the radix is its length.
    alphabet: &'static [u8],
    /// Written before the digits, and read with or without them (either
    /// case): `0x` for hex.
    prefix: &'static str,
    /// Written with leading zeros to this many digits at least.
    width: usize,
    /// Read at `width` digits at the most, so that every ID has one width
    /// and the text sorts as the IDs do.
    fixed: bool,
    /// Read in either case.
    either_case: bool,
    /// Further characters read as a digit's value: Crockford's look-alikes.
    aliases: &'static [(u8, u8)],
    /// Recognised without being named ([`Id::parse`]): the forms whose
    /// text cannot be taken for another's.
    guessed: bool,
    /// What the form accepts, in words, for messages and help.
    allowed: &'static str,
}

/// Declares the forms once: the enum, [`TextForm::ALL`] and each form's
/// [`Spec`] come from the one list below.
macro_rules! text_forms {
    ($( $(#[$doc:meta])* $form:ident => $spec:expr, )+) => {
        /// How an ID is written as text.
        ///
        /// | form | alphabet | width | example (4194439168) |
        /// | --- | --- | --- | --- |
        /// | `decimal` | `0-9` | 1 to 20 | `4194439168` |
        /// | `hex` | `0x` then `0-9a-f` | 1 to 16 digits | `0xfa021000` |
        /// | `base32` | Crockford: `0-9A-Z` without `I L O U` | always 13 | `0000003X04400` |
        /// | `base62` | `0-9A-Za-z` | always 11 | `000004ZrREe` |
        /// | `base58` | Bitcoin: `1-9A-Za-z` without `0 I O l` | 1 to 11 | `7Pebdh` |
        ///
        /// Both base32 and base62 are written at a fixed width with leading zeros and
        /// their alphabets are in ASCII order, so **sorting their text sorts the
        /// IDs**: for any two IDs `a < b`, `a`'s base32 (or base62) text is less than
        /// `b`'s, byte by byte. Decimal, hex and base58 have no fixed width and do
        /// not keep that order (`"9" > "10"`).
        ///
        /// Parsing takes the form explicitly; [`Id::parse`] recognises only decimal
        /// and `0x` hexadecimal, because a run of digits is valid decimal, base32,
        /// base62 and base58 at once and would mean four different IDs. There is no
        /// prefix for base32, base62 or base58: name the form.
        ///
        /// Base32 reads upper or lower case and Crockford's aliases (`I` and `L` as
        /// `1`, `O` as `0`); base32 and base62 take 1 up to their full width, so the
        /// leading zeros may be left out. Hex takes its digits with or without `0x`.
        ///
        /// ```
        /// use snowflake::{Id, TextForm};
        ///
        /// let id = Id::new(4194439168);
        /// assert_eq!(id.to_text(TextForm::Base32), "0000003X04400");
        /// assert_eq!(id.to_text(TextForm::Base62), "000004ZrREe");
        /// assert_eq!(id.to_text(TextForm::Base58), "7Pebdh");
        /// assert_eq!(TextForm::Base32.parse("3xo44oo")?, id);
        /// assert_eq!("base62".parse::<TextForm>()?, TextForm::Base62);
        /// # Ok::<(), snowflake::Error>(())
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum TextForm {
            $( $(#[$doc])* $form, )+
        }

        impl TextForm {
            /// Every form, in the order the JSON breakdown lists them after decimal.
            ///
            /// ```
            /// assert_eq!(snowflake::TextForm::ALL.len(), 5);
            /// ```
            pub const ALL: [TextForm; [$(stringify!($form)),+].len()] = [$(TextForm::$form),+];

            /// The form's entry in the table.
            const fn spec(self) -> &'static Spec {
                match self {
                    $( TextForm::$form => {
                        const SPEC: Spec = $spec;
                        &SPEC
                    } )+
                }
            }
        }
    };
}

text_forms! {
    /// Decimal digits, as `Display` writes an ID.
    Decimal => Spec {
        name: "decimal",
        alphabet: b"0123456789",
        prefix: "",
        width: 1,
        fixed: false,
        either_case: false,
        aliases: &[],
        guessed: true,
        allowed: "a decimal ID is 1 to 20 digits 0-9, from 0 to 18446744073709551615",
    },
    /// `0x` and lower-case hexadecimal digits.
    Hex => Spec {
        name: "hex",
        alphabet: b"0123456789abcdef",
        prefix: "0x",
        width: 1,
        fixed: false,
        either_case: true,
        aliases: &[],
        guessed: true,
        allowed: "a hex ID is 1 to 16 digits 0-9 and a-f (either case), with or without 0x",
    },
    /// Crockford base32, 13 upper-case characters.
    Base32 => Spec {
        name: "base32",
        alphabet: b"0123456789ABCDEFGHJKMNPQRSTVWXYZ",
        prefix: "",
        width: 13,
        fixed: true,
        either_case: true,
        aliases: &[(b'I', 1), (b'L', 1), (b'O', 0)],
        guessed: false,
        allowed: "a base32 ID is 1 to 13 Crockford characters 0-9 and A-Z without U \
                  (either case; I and L read as 1, O as 0), up to FZZZZZZZZZZZZ",
    },
    /// Base62 (`0-9A-Za-z`), 11 characters.
    Base62 => Spec {
        name: "base62",
        alphabet: b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        prefix: "",
        width: 11,
        fixed: true,
        either_case: false,
        aliases: &[],
        guessed: false,
        allowed: "a base62 ID is 1 to 11 characters 0-9, A-Z and a-z, up to LygHa16AHYF",
    },
    /// Base58 with Bitcoin's alphabet.
    Base58 => Spec {
        name: "base58",
        alphabet: b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
        prefix: "",
        width: 1,
        fixed: false,
        either_case: false,
        aliases: &[],
        guessed: false,
        allowed: "a base58 ID is 1 to 11 characters 1-9, A-Z and a-z without 0, I, O and l, \
                  up to jpXCZedGfVQ",
    },
}

/// A byte's digit value in one form, or `NONE`.
const NONE: u8 = u8::MAX;

/// Every byte's digit value in each form, in the order of
/// [`TextForm::ALL`], built at compile time from the table, so that the
/// encoder and the parser cannot disagree.
const DIGITS: [[u8; 256]; TextForm::ALL.len()] = {
    let mut tables = [[NONE; 256]; TextForm::ALL.len()];
    let mut f = 0;
    while f < TextForm::ALL.len() {
        let spec = TextForm::ALL[f].spec();
        let t = &mut tables[f];
        let mut i = 0;
        while i < spec.alphabet.len() {
            let byte = spec.alphabet[i];
            t[byte as usize] = i as u8;
            if spec.either_case {
                t[byte.to_ascii_lowercase() as usize] = i as u8;
                t[byte.to_ascii_uppercase() as usize] = i as u8;
            }
            i += 1;
        }
        let mut a = 0;
        while a < spec.aliases.len() {
            let (byte, value) = spec.aliases[a];
            t[byte as usize] = value;
            if spec.either_case {
                t[byte.to_ascii_lowercase() as usize] = value;
            }
            a += 1;
        }
        f += 1;
    }
    tables
};

/// Writes `n` in radix `R` at the end of `buf`, at least `width` digits;
/// returns where the digits start. The radix is a constant so that the
/// divisions compile to multiplications (a bulk decode writes several
/// numbers per ID).
fn radix_digits<const R: u64>(
    mut n: u64,
    alphabet: &[u8],
    width: usize,
    buf: &mut [u8; TextForm::MAX_LEN],
) -> usize {
    let mut i = buf.len();
    while n > 0 || buf.len() - i < width {
        i -= 1;
        buf[i] = alphabet[(n % R) as usize];
        n /= R;
    }
    i
}

/// [`radix_digits`] for a radix without a constant of its own.
fn any_radix_digits(
    mut n: u64,
    alphabet: &[u8],
    width: usize,
    buf: &mut [u8; TextForm::MAX_LEN],
) -> usize {
    let radix = alphabet.len() as u64;
    let mut i = buf.len();
    while n > 0 || buf.len() - i < width {
        i -= 1;
        buf[i] = alphabet[(n % radix) as usize];
        n /= radix;
    }
    i
}

/// How many digits `u64::MAX` takes in `radix`.
const fn longest(radix: u64) -> usize {
    let (mut n, mut len) = (u64::MAX, 0);
    while n > 0 {
        n /= radix;
        len += 1;
    }
    len
}

/// Each form's most digits, in the order of [`TextForm::ALL`]: as many as
/// `u64::MAX` takes in its radix, counted once, at compile time.
const MAX_DIGITS: [usize; TextForm::ALL.len()] = {
    let mut most = [0; TextForm::ALL.len()];
    let mut f = 0;
    while f < TextForm::ALL.len() {
        most[f] = longest(TextForm::ALL[f].spec().alphabet.len() as u64);
        f += 1;
    }
    most
};

impl TextForm {
    /// The forms' names, in the order of [`TextForm::ALL`]: what a front end
    /// offers where a form is asked for.
    ///
    /// ```
    /// assert_eq!(snowflake::TextForm::NAMES[4], "base58");
    /// ```
    pub const NAMES: [&'static str; TextForm::ALL.len()] = {
        let mut names = [""; TextForm::ALL.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = TextForm::ALL[i].name();
            i += 1;
        }
        names
    };

    /// The names of the forms [`Id::parse`] never guesses, which must be
    /// named to be read, in the order of [`TextForm::ALL`].
    const NAMED_ONLY: [&'static str; TextForm::NAMED_ONLY_COUNT] = {
        let mut names = [""; TextForm::NAMED_ONLY_COUNT];
        let (mut i, mut n) = (0, 0);
        while i < TextForm::ALL.len() {
            if !TextForm::ALL[i].is_guessed() {
                names[n] = TextForm::ALL[i].name();
                n += 1;
            }
            i += 1;
        }
        names
    };

    const NAMED_ONLY_COUNT: usize = {
        let (mut i, mut n) = (0, 0);
        while i < TextForm::ALL.len() {
            if !TextForm::ALL[i].is_guessed() {
                n += 1;
            }
            i += 1;
        }
        n
    };

    /// Every form but decimal, in the order of [`TextForm::ALL`]: the forms
    /// an ID's breakdown lists under `text`, beside its decimal `id`.
    ///
    /// ```
    /// use snowflake::TextForm;
    ///
    /// let names: Vec<&str> = TextForm::ENCODED.iter().map(|f| f.name()).collect();
    /// assert_eq!(names, ["hex", "base32", "base62", "base58"]);
    /// ```
    pub const ENCODED: &'static [TextForm] = match TextForm::ALL.split_first() {
        Some((TextForm::Decimal, rest)) => rest,
        _ => panic!("TextForm::ALL begins with decimal, the form an ID is shown in"),
    };

    /// The longest text any form writes for any ID (decimal's 20 digits).
    ///
    /// ```
    /// let mut buf = [0u8; snowflake::TextForm::MAX_LEN];
    /// assert_eq!(snowflake::TextForm::Decimal.encode(u64::MAX.into(), &mut buf).len(), 20);
    /// ```
    pub const MAX_LEN: usize = {
        let mut max = 0;
        let mut i = 0;
        while i < TextForm::ALL.len() {
            let spec = TextForm::ALL[i].spec();
            let len = spec.prefix.len() + longest(spec.alphabet.len() as u64);
            let len = if len > spec.width { len } else { spec.width };
            if len > max {
                max = len;
            }
            i += 1;
        }
        max
    };

    /// The form's name: `decimal`, `hex`, `base32`, `base62` or `base58`.
    ///
    /// ```
    /// assert_eq!(snowflake::TextForm::Base58.name(), "base58");
    /// ```
    pub const fn name(self) -> &'static str {
        self.spec().name
    }

    /// The width every ID is written at, for the forms that keep sort order.
    ///
    /// ```
    /// use snowflake::TextForm;
    ///
    /// assert_eq!(TextForm::Base32.fixed_width(), Some(13));
    /// assert_eq!(TextForm::Base62.fixed_width(), Some(11));
    /// assert_eq!(TextForm::Base58.fixed_width(), None);
    /// ```
    pub const fn fixed_width(self) -> Option<usize> {
        let spec = self.spec();
        if spec.fixed { Some(spec.width) } else { None }
    }

    /// The most digits the form reads: as many as the largest ID takes, so
    /// that leading zeros past it are refused as a too-long fixed-width ID
    /// is, in every form, and the "1 to N" of each form's message is true.
    ///
    /// ```
    /// use snowflake::TextForm;
    ///
    /// assert_eq!(TextForm::Decimal.max_digits(), 20);
    /// assert_eq!(TextForm::Hex.max_digits(), 16);
    /// assert_eq!(TextForm::Base58.max_digits(), 11);
    /// ```
    pub const fn max_digits(self) -> usize {
        MAX_DIGITS[self as usize]
    }

    /// The characters the form writes its digits with, in the order of
    /// their values (after the prefix, if any).
    ///
    /// ```
    /// assert_eq!(snowflake::TextForm::Hex.alphabet(), "0123456789abcdef");
    /// ```
    pub const fn alphabet(self) -> &'static str {
        match core::str::from_utf8(self.spec().alphabet) {
            Ok(alphabet) => alphabet,
            Err(_) => panic!("an alphabet is ASCII"),
        }
    }

    /// Whether [`Id::parse`] recognises the form without being told (decimal,
    /// and hex by its `0x`); the others must be named.
    ///
    /// ```
    /// assert!(snowflake::TextForm::Hex.is_guessed());
    /// assert!(!snowflake::TextForm::Base58.is_guessed());
    /// ```
    pub const fn is_guessed(self) -> bool {
        self.spec().guessed
    }

    /// What the form accepts, in words, for error messages and help.
    ///
    /// ```
    /// assert!(snowflake::TextForm::Base62.allowed().contains("0-9, A-Z and a-z"));
    /// ```
    pub const fn allowed(self) -> &'static str {
        self.spec().allowed
    }

    /// The byte's value as a digit of this form, or [`NONE`].
    fn digit(self, byte: u8) -> u8 {
        DIGITS[self as usize][byte as usize]
    }

    /// Writes `id` in this form into `buf` and returns the text, without
    /// allocating; bulk output uses it once per ID.
    ///
    /// ```
    /// use snowflake::{Id, TextForm};
    ///
    /// let mut buf = [0u8; TextForm::MAX_LEN];
    /// assert_eq!(TextForm::Hex.encode(Id::new(255), &mut buf), "0xff");
    /// assert_eq!(TextForm::Base32.encode(Id::new(0), &mut buf), "0000000000000");
    /// ```
    pub fn encode(self, id: Id, buf: &mut [u8; TextForm::MAX_LEN]) -> &str {
        // Only ASCII from the alphabets was written.
        core::str::from_utf8(self.encode_bytes(id, buf)).unwrap_or("")
    }

    /// Appends `id` in this form to `out`: what [`TextForm::encode`] writes,
    /// without checking it is UTF-8 again, for output built as bytes.
    ///
    /// ```
    /// let mut row = b"id=".to_vec();
    /// snowflake::TextForm::Base62.write_into(62.into(), &mut row);
    /// assert_eq!(row, b"id=00000000010");
    /// ```
    pub fn write_into(self, id: Id, out: &mut Vec<u8>) {
        let mut buf = [0u8; TextForm::MAX_LEN];
        out.extend_from_slice(self.encode_bytes(id, &mut buf));
    }

    /// Writes `id` in this form at the end of `buf` and returns where it
    /// starts: for output assembled in place from its end, a row at a time,
    /// with no length to work out first and no copy per value.
    ///
    /// ```
    /// let mut buf = [0u8; snowflake::TextForm::MAX_LEN];
    /// let start = snowflake::TextForm::Decimal.write_back(4194439168.into(), &mut buf);
    /// assert_eq!(&buf[start..], b"4194439168");
    /// ```
    #[inline]
    pub fn write_back(self, id: Id, buf: &mut [u8; TextForm::MAX_LEN]) -> usize {
        // What `encode_bytes` does for decimal, called directly: without the
        // match and the slice in between it inlines into a bulk writer's
        // loop, which writes several numbers per ID.
        if self == TextForm::Decimal {
            return digits::decimal_back(id.get(), buf, TextForm::MAX_LEN);
        }
        buf.len() - self.encode_bytes(id, buf).len()
    }

    /// The encoder behind both: the common radixes as constants, so that
    /// the divisions compile to multiplications (a bulk decode writes
    /// several numbers per ID).
    fn encode_bytes(self, id: Id, buf: &mut [u8; TextForm::MAX_LEN]) -> &[u8] {
        let (n, spec) = (id.get(), self.spec());
        let (alphabet, width) = (spec.alphabet, spec.width);
        let mut start = match alphabet.len() {
            10 if alphabet == b"0123456789" && width <= 1 => {
                digits::decimal_back(n, buf, TextForm::MAX_LEN)
            }
            16 => radix_digits::<16>(n, alphabet, width, buf),
            32 => radix_digits::<32>(n, alphabet, width, buf),
            58 => radix_digits::<58>(n, alphabet, width, buf),
            62 => radix_digits::<62>(n, alphabet, width, buf),
            _ => any_radix_digits(n, alphabet, width, buf),
        };
        for &byte in spec.prefix.as_bytes().iter().rev() {
            start -= 1;
            buf[start] = byte;
        }
        &buf[start..]
    }

    /// `input` after this form's prefix, in either case; `None` when the
    /// form has no prefix or `input` does not start with it.
    fn after_prefix(self, input: &[u8]) -> Option<&[u8]> {
        let prefix = self.spec().prefix.as_bytes();
        match input.split_at_checked(prefix.len()) {
            Some((head, rest)) if !prefix.is_empty() && head.eq_ignore_ascii_case(prefix) => {
                Some(rest)
            }
            _ => None,
        }
    }

    /// The form [`Id::parse`] reads text without a prefix in.
    const UNPREFIXED: TextForm = {
        let mut found = None;
        let mut i = 0;
        while i < TextForm::ALL.len() {
            let spec = TextForm::ALL[i].spec();
            if spec.guessed && spec.prefix.is_empty() {
                assert!(found.is_none(), "one guessed form without a prefix");
                found = Some(TextForm::ALL[i]);
            }
            i += 1;
        }
        match found {
            Some(form) => form,
            None => panic!("one guessed form without a prefix"),
        }
    };

    /// The bytes a guessed form's prefix starts with, either case.
    const PREFIX_STARTS: [bool; 256] = {
        let mut starts = [false; 256];
        let mut i = 0;
        while i < TextForm::ALL.len() {
            let spec = TextForm::ALL[i].spec();
            if spec.guessed && !spec.prefix.is_empty() {
                let first = spec.prefix.as_bytes()[0];
                starts[first.to_ascii_lowercase() as usize] = true;
                starts[first.to_ascii_uppercase() as usize] = true;
            }
            i += 1;
        }
        starts
    };

    /// The form [`Id::parse`] reads `input` in, and its digits: a guessed
    /// form whose prefix it starts with, else the one without a prefix.
    #[inline]
    fn guess(input: &[u8]) -> (TextForm, &[u8]) {
        // Most IDs start with a digit no prefix starts with: one look, not
        // a look at every form (Id::parse is on every request's path).
        match input.first() {
            Some(&first) if TextForm::PREFIX_STARTS[first as usize] => {}
            _ => return (TextForm::UNPREFIXED, input),
        }
        for form in TextForm::ALL {
            if form.is_guessed()
                && let Some(digits) = form.after_prefix(input)
            {
                return (form, digits);
            }
        }
        (TextForm::UNPREFIXED, input)
    }

    /// Reads an ID written in this form, with an error that names the input,
    /// the form and what it allows.
    ///
    /// ```
    /// use snowflake::TextForm;
    ///
    /// assert_eq!(TextForm::Base62.parse("LygHa16AHYF")?.get(), u64::MAX);
    /// assert_eq!(TextForm::Hex.parse("FF")?.get(), 255);
    /// let err = TextForm::Base58.parse("0abc").unwrap_err();
    /// assert_eq!(err.field(), Some("id"));
    /// assert!(err.to_string().starts_with("id \"0abc\" is not base58: '0' is not allowed; a base58 ID is"));
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn parse(self, input: &str) -> Result<Id, Error> {
        let digits = self.after_prefix(input.as_bytes()).map_or(input, |digits| {
            // The prefix is ASCII: what follows starts on a character.
            &input[input.len() - digits.len()..]
        });
        self.parse_digits(input, digits)
    }

    /// The value of `digits` in this form, or what is wrong with them and,
    /// for a bad character, at which byte.
    fn value_of(self, digits: &[u8]) -> Result<u64, (TextProblem, usize)> {
        if digits.is_empty() {
            return Err((TextProblem::Empty, 0));
        }
        // Up to 19 decimal digits cannot overflow: the common case, without
        // a check per digit (decimal has no fixed width to check first).
        if self == TextForm::Decimal && digits.len() <= 19 {
            let mut value: u64 = 0;
            for &byte in digits {
                let digit = byte.wrapping_sub(b'0');
                if digit > 9 {
                    return self.slow_value_of(digits);
                }
                value = value * 10 + u64::from(digit);
            }
            return Ok(value);
        }
        if digits.len() > self.max_digits() {
            return Err(self.too_long(digits));
        }
        self.slow_value_of(digits)
    }

    /// What is wrong with more digits than the form reads: a character
    /// that is no digit, or a value past 64 bits, is named first, as in
    /// shorter text; only digits that fit, with leading zeros past the
    /// form's length, are too long.
    #[cold]
    fn too_long(self, digits: &[u8]) -> (TextProblem, usize) {
        match self.slow_value_of(digits) {
            Err(problem) => problem,
            Ok(_) => (TextProblem::TooLong(digits.len()), 0),
        }
    }

    fn slow_value_of(self, digits: &[u8]) -> Result<u64, (TextProblem, usize)> {
        let radix = self.spec().alphabet.len() as u64;
        let mut value: u64 = 0;
        for (at, &byte) in digits.iter().enumerate() {
            let digit = self.digit(byte);
            if digit == NONE {
                if at == 0 && byte == b'-' && digits.len() > 1 {
                    return Err((TextProblem::Negative, 0));
                }
                return Err((TextProblem::BadChar('?'), at));
            }
            value = value
                .checked_mul(radix)
                .and_then(|v| v.checked_add(u64::from(digit)))
                .ok_or((TextProblem::TooLarge, 0))?;
        }
        Ok(value)
    }

    fn parse_digits(self, input: &str, digits: &str) -> Result<Id, Error> {
        self.value_of(digits.as_bytes())
            .map(Id::new)
            .map_err(|(problem, at)| {
                let problem = match problem {
                    // The character at fault, whole even if it is not ASCII.
                    TextProblem::BadChar(_) => {
                        TextProblem::BadChar(digits[at..].chars().next().unwrap_or('?'))
                    }
                    TextProblem::TooLong(_) => TextProblem::TooLong(digits.chars().count()),
                    other => other,
                };
                Error::new(Repr::InvalidText {
                    value: input.to_string(),
                    form: self.name(),
                    allowed: self.allowed(),
                    problem,
                    // Letters in what was read as a number: maybe another form.
                    hint: (self.is_guessed() && matches!(problem, TextProblem::BadChar(_)))
                        .then_some(&TextForm::NAMED_ONLY[..]),
                })
            })
    }

    /// The ID in `input` if it is well formed, without building an error;
    /// `None` sends the caller to the `&str` parser for the message.
    fn parse_fast(form: Option<TextForm>, input: &[u8]) -> Option<Id> {
        let (form, digits) = match form {
            None => TextForm::guess(input),
            Some(form) => (form, form.after_prefix(input).unwrap_or(input)),
        };
        form.value_of(digits).ok().map(Id::new)
    }

    /// The forms [`Id::parse`] recognises without being told: decimal, or
    /// hexadecimal after `0x`.
    pub(crate) fn parse_auto(input: &str) -> Result<Id, Error> {
        let (form, digits) = TextForm::guess(input.as_bytes());
        if digits.len() == input.len() {
            return form.parse_digits(input, input);
        }
        // A prefix is ASCII: what follows starts on a character.
        form.parse_digits(input, &input[input.len() - digits.len()..])
    }
}

impl fmt::Display for TextForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TextForm {
    type Err = Error;

    /// A form by name, ASCII case ignored.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        TextForm::ALL
            .into_iter()
            .find(|form| form.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| {
                Error::new(Repr::UnknownTextForm {
                    value: name.into(),
                    forms: &TextForm::NAMES,
                })
            })
    }
}

impl Id {
    /// Parses decimal or `0x` hexadecimal. This is the one ID parser: `FromStr`,
    /// `TryFrom<&str>`, serde, the CLI and the HTTP API all call it, and
    /// [`Id::parse_as`] for the other [`TextForm`]s, which it never guesses.
    ///
    /// ```
    /// use snowflake::Id;
    ///
    /// assert_eq!(Id::parse("0x10")?.get(), 16);
    /// let err = Id::parse("18446744073709551616").unwrap_err();
    /// assert!(err.to_string().contains("does not fit in 64 bits"));
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn parse(input: &str) -> Result<Id, Error> {
        TextForm::parse_auto(input)
    }

    /// Writes the decimal digits into `buf` and returns them; 20 bytes hold
    /// every `u64`. Servers use it to stream IDs without a `String` per ID.
    ///
    /// ```
    /// let mut buf = [0u8; 20];
    /// assert_eq!(snowflake::Id::new(4194439168).to_decimal(&mut buf), "4194439168");
    /// ```
    pub fn to_decimal(self, buf: &mut [u8; 20]) -> &str {
        TextForm::Decimal.encode(self, buf)
    }

    /// The ID written in a text form.
    ///
    /// ```
    /// use snowflake::{Id, TextForm};
    ///
    /// assert_eq!(Id::new(175928847299117063).to_text(TextForm::Base62), "0Czks0tP37X");
    /// ```
    pub fn to_text(self, form: TextForm) -> String {
        let mut buf = [0u8; TextForm::MAX_LEN];
        String::from(form.encode(self, &mut buf))
    }

    /// Reads an ID in the form given, or, with `None`, as [`Id::parse`] does
    /// (decimal or `0x` hexadecimal). Front ends hold an `Option<TextForm>`
    /// for an optional `--format` and call this.
    ///
    /// ```
    /// use snowflake::{Id, TextForm};
    ///
    /// assert_eq!(Id::parse_as("10", None)?.get(), 10);
    /// assert_eq!(Id::parse_as("10", Some(TextForm::Base62))?.get(), 62);
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn parse_as(input: &str, form: Option<TextForm>) -> Result<Id, Error> {
        match form {
            Some(form) => form.parse(input),
            None => TextForm::parse_auto(input),
        }
    }

    /// [`Id::parse_as`] for bytes read from a file or a socket: a well-formed
    /// ID is read without checking the bytes are UTF-8 first (each form's
    /// alphabet is ASCII); anything else gets the same error as the text would.
    ///
    /// ```
    /// use snowflake::{Id, TextForm};
    ///
    /// assert_eq!(Id::parse_bytes(b"0xff", None)?.get(), 255);
    /// assert_eq!(Id::parse_bytes(b"21", Some(TextForm::Base58))?.get(), 58);
    /// let err = Id::parse_bytes(b"\xff", None).unwrap_err();
    /// assert!(err.to_string().contains("an ID is text in UTF-8"));
    /// # Ok::<(), snowflake::Error>(())
    /// ```
    pub fn parse_bytes(input: &[u8], form: Option<TextForm>) -> Result<Id, Error> {
        if let Some(id) = TextForm::parse_fast(form, input) {
            return Ok(id);
        }
        match core::str::from_utf8(input) {
            Ok(text) => Id::parse_as(text, form),
            Err(_) => Err(Error::invalid_value(
                "id",
                &alloc::format!("{:?}", String::from_utf8_lossy(input)),
                "an ID is text in UTF-8",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use proptest::prelude::*;

    // The alphabets typed again, apart from the table, for the table to be
    // checked against.
    const BASE32: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    const BASE58: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

    /// The plain definition of each form, for the fast encoder to agree with.
    fn reference(form: TextForm, mut n: u64) -> String {
        let (alphabet, radix): (&[u8], u64) = match form {
            TextForm::Decimal => return format!("{n}"),
            TextForm::Hex => return format!("{n:#x}"),
            TextForm::Base32 => (BASE32, 32),
            TextForm::Base62 => (BASE62, 62),
            TextForm::Base58 => (BASE58, 58),
        };
        let mut digits = Vec::new();
        loop {
            digits.push(alphabet[(n % radix) as usize]);
            n /= radix;
            if n == 0 {
                break;
            }
        }
        while digits.len() < form.fixed_width().unwrap_or(0) {
            digits.push(b'0');
        }
        digits.reverse();
        String::from_utf8(digits).unwrap()
    }

    #[test]
    fn every_form_is_listed_once_and_encoded_is_all_but_decimal() {
        for (i, form) in TextForm::ALL.into_iter().enumerate() {
            assert!(!TextForm::ALL[..i].contains(&form), "{form:?} twice");
            assert_eq!(form.name().parse::<TextForm>().unwrap(), form);
        }
        let encoded: Vec<TextForm> = TextForm::ALL
            .into_iter()
            .filter(|f| *f != TextForm::Decimal)
            .collect();
        assert_eq!(TextForm::ENCODED, encoded);
    }

    #[test]
    fn alphabets_are_in_ascii_order_without_repeats() {
        for form in TextForm::ALL {
            let alphabet = form.alphabet().as_bytes();
            assert!(alphabet.windows(2).all(|w| w[0] < w[1]), "{form}");
            assert!(alphabet.len() >= 2 && alphabet.is_ascii(), "{form}");
        }
        assert_eq!(TextForm::Base32.alphabet().as_bytes(), BASE32);
        assert_eq!(TextForm::Base62.alphabet().as_bytes(), BASE62);
        assert_eq!(TextForm::Base58.alphabet().as_bytes(), BASE58);
        assert!(!BASE58.iter().any(|b| b"0IOl".contains(b)));
        assert!(!BASE32.iter().any(|b| b"ILOU".contains(b)));
    }

    #[test]
    fn the_limits_are_what_the_messages_say() {
        for form in TextForm::ALL {
            let max = Id::new(u64::MAX).to_text(form);
            let allowed = form.allowed();
            if form != TextForm::Hex {
                assert!(allowed.contains(max.as_str()), "{form}: {max} / {allowed}");
            }
            let longest = (0..=64)
                .map(|bits| Id::new(u64::MAX >> (64 - bits.max(1))).to_text(form).len())
                .max()
                .unwrap();
            let width = form.fixed_width().unwrap_or(longest);
            assert_eq!(longest, width, "{form}");
        }
        assert_eq!(Id::new(u64::MAX).to_text(TextForm::Base32), "FZZZZZZZZZZZZ");
    }

    #[test]
    fn crockford_aliases_and_case() {
        let id = TextForm::Base32.parse("00000003X0880").unwrap();
        for alias in ["3x0880", "3XO88O", "3xo88o", "00000003X0880"] {
            assert_eq!(TextForm::Base32.parse(alias).unwrap(), id, "{alias}");
        }
        assert_eq!(
            TextForm::Base32.parse("iIlL").unwrap(),
            TextForm::Base32.parse("1111").unwrap()
        );
        let err = TextForm::Base32.parse("U").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("id \"U\" is not base32: 'U' is not allowed; a base32 ID is 1 to 13"),
            "{err}"
        );
    }

    #[test]
    fn each_forms_words_give_the_length_it_reads() {
        for form in TextForm::ALL {
            let words = form.spec().allowed;
            let length = alloc::format!("1 to {} ", form.max_digits());
            assert!(words.contains(&length), "{form}: {words}");
        }
    }

    #[test]
    fn errors_name_the_input_the_form_and_what_is_allowed() {
        let cases = [
            (
                TextForm::Base62,
                "",
                "id \"\" is empty; a base62 ID is 1 to 11 characters",
            ),
            (
                TextForm::Base62,
                "abc-1",
                "id \"abc-1\" is not base62: '-' is not allowed; a base62 ID",
            ),
            (
                TextForm::Base62,
                "000000000000",
                "id \"000000000000\" is not base62: it is 12 characters long; a base62 ID is 1 to 11",
            ),
            (
                TextForm::Base62,
                "LygHa16AHYG",
                "id \"LygHa16AHYG\" does not fit in 64 bits; IDs are 0 to 18446744073709551615; a base62 ID",
            ),
            (TextForm::Base32, "G000000000000", "does not fit in 64 bits"),
            // Leading zeros past the largest ID's length, in the forms
            // without a fixed width too: "1 to N" holds for every form.
            (
                TextForm::Base58,
                "111111111111",
                "id \"111111111111\" is not base58: it is 12 characters long; a base58 ID is 1 to 11",
            ),
            (
                TextForm::Decimal,
                "000000000000000000001",
                "is not decimal: it is 21 characters long; a decimal ID is 1 to 20",
            ),
            (
                TextForm::Hex,
                "0x00000000000000001",
                "is not hex: it is 17 characters long; a hex ID is 1 to 16",
            ),
            // Past the length, a character that is no digit is named as
            // in shorter text, not counted in bytes as a length.
            (
                TextForm::Base58,
                "1111111111é",
                "id \"1111111111é\" is not base58: 'é' is not allowed",
            ),
            (
                TextForm::Base62,
                "0000000000é",
                "id \"0000000000é\" is not base62: 'é' is not allowed",
            ),
            (TextForm::Base58, "jpXCZedGfVR", "does not fit in 64 bits"),
            (
                TextForm::Base58,
                "é",
                "id \"é\" is not base58: 'é' is not allowed",
            ),
            (
                TextForm::Decimal,
                "-1",
                "id \"-1\" is negative; a decimal ID",
            ),
            (
                TextForm::Decimal,
                "1x",
                "'x' is not allowed; a decimal ID is 1 to 20 digits 0-9, from 0 to 18446744073709551615 (name the form",
            ),
            (TextForm::Hex, "0x", "id \"0x\" is empty; a hex ID"),
            (
                TextForm::Hex,
                "0x1g",
                "id \"0x1g\" is not hex: 'g' is not allowed",
            ),
        ];
        for (form, input, expected) in cases {
            let err = form.parse(input).unwrap_err();
            assert_eq!(err.field(), Some("id"));
            assert_eq!(err.kind(), crate::error::ErrorKind::InvalidInput);
            assert!(
                err.to_string().contains(expected),
                "{form} {input:?}: {err}"
            );
        }
    }

    #[test]
    fn form_names_parse_and_refuse_with_the_list() {
        for form in TextForm::ALL {
            assert_eq!(form.name().parse::<TextForm>().unwrap(), form);
            assert_eq!(
                form.name().to_uppercase().parse::<TextForm>().unwrap(),
                form
            );
        }
        let err = "base64".parse::<TextForm>().unwrap_err();
        assert_eq!(err.field(), Some("format"));
        assert_eq!(
            err.to_string(),
            "format base64 is not allowed; a text form is decimal, hex, base32, base62 or base58"
        );
    }

    proptest! {
        #[test]
        fn every_form_round_trips_and_matches_its_definition(raw in any::<u64>(), bits in 0u32..64) {
            // Small values too, where the leading zeros matter.
            let id = Id::new(raw >> bits);
            for form in TextForm::ALL {
                let text = id.to_text(form);
                prop_assert_eq!(&text, &reference(form, id.get()));
                prop_assert_eq!(form.parse(&text).unwrap(), id);
                if let Some(width) = form.fixed_width() {
                    prop_assert_eq!(text.len(), width);
                    prop_assert_eq!(form.parse(text.trim_start_matches('0')).ok().unwrap_or(Id::new(0)), id);
                }
            }
            prop_assert_eq!(TextForm::Base32.parse(&id.to_text(TextForm::Base32).to_lowercase()).unwrap(), id);
        }

        #[test]
        fn fixed_width_text_sorts_as_the_ids_do(a in any::<u64>(), b in any::<u64>(), shift in 0u32..64) {
            let (a, b) = (Id::new(a >> shift), Id::new(b));
            for form in [TextForm::Base32, TextForm::Base62] {
                let (ta, tb) = (a.to_text(form), b.to_text(form));
                prop_assert_eq!(ta.cmp(&tb), a.cmp(&b), "{} {} vs {}", form, ta, tb);
            }
        }

        #[test]
        fn parsers_never_panic_and_errors_name_the_id(s in "\\PC{0,24}") {
            prop_assert_eq!(Id::parse_bytes(s.as_bytes(), None), Id::parse_as(&s, None));
            for form in TextForm::ALL {
                prop_assert_eq!(Id::parse_bytes(s.as_bytes(), Some(form)), form.parse(&s));
                match form.parse(&s) {
                    Ok(id) => prop_assert!(form.parse(&id.to_text(form)).unwrap() == id),
                    Err(err) => {
                        prop_assert_eq!(err.field(), Some("id"));
                        let prefix = format!("id {:?} ", s);
                        prop_assert!(err.to_string().starts_with(&prefix));
                    }
                }
            }
        }
    }
}
