use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use snowflake::{Id, Layout};
use snowflake_mask::{ErrorKind, KeyFile, MaskKey, Masker};

use crate::support::KEY_HEX;

/// Another key, for files that must read.
const OTHER: &str = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a";

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Every 8-character piece of `secret` that `text` contains: none, for a
/// message that shows nothing of it.
fn pieces_of(secret: &str, text: &str) -> Vec<String> {
    let chars: Vec<char> = secret.chars().collect();
    chars
        .windows(8)
        .map(|w| w.iter().collect::<String>())
        .filter(|piece| text.to_lowercase().contains(&piece.to_lowercase()))
        .collect()
}

#[test]
fn a_new_key_file_is_private_hexadecimal_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mask.key");
    let written = KeyFile::create_new(&path).unwrap();
    assert_eq!(mode(&path), 0o600);
    assert!(written.warning().is_none());
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(text.len(), 65, "{} bytes", text.len());
    assert!(text.ends_with('\n'));
    assert!(
        text.trim_end()
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );
    // The key written and the key read mask alike, and like the text's key.
    let read = KeyFile::read(&path).unwrap();
    let twitter = Layout::twitter();
    let id = Id::new(1541815603606036480);
    let from_hex = MaskKey::from_hex(&text).unwrap();
    let masked = Masker::new(&twitter, written.key())
        .unwrap()
        .mask(id)
        .unwrap();
    assert_eq!(
        Masker::new(&twitter, read.key()).unwrap().mask(id).unwrap(),
        masked
    );
    assert_eq!(
        Masker::new(&twitter, &from_hex).unwrap().mask(id).unwrap(),
        masked
    );
    // Nothing of it in Debug output.
    let debug = format!("{read:?} {written:?}");
    assert!(pieces_of(text.trim(), &debug).is_empty(), "{debug}");
    assert!(debug.contains("[redacted]"), "{debug}");
}

#[test]
fn a_key_file_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mask.key");
    fs::write(&path, format!("{KEY_HEX}\n")).unwrap();
    let err = KeyFile::create_new(&path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(
        err.to_string(),
        format!(
            "cannot create key file {}: it exists already, and a key file is never overwritten; \
             remove it first or choose another path",
            path.display()
        )
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), format!("{KEY_HEX}\n"));
    assert!(pieces_of(KEY_HEX, &err.to_string()).is_empty());
}

/// A symbolic link planted where the key goes is not followed: the key is
/// not written to wherever it points.
#[test]
fn a_planted_link_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("elsewhere");
    let link = dir.path().join("mask.key");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert!(KeyFile::create_new(&link).is_err());
    assert!(!target.exists());
}

#[test]
fn whitespace_around_the_key_and_either_case_are_fine() {
    let dir = tempfile::tempdir().unwrap();
    let reference = MaskKey::from_hex(KEY_HEX).unwrap();
    let id = Id::new(4194439168);
    let expected = Masker::new(&Layout::twitter(), &reference)
        .unwrap()
        .mask(id)
        .unwrap();
    for (i, text) in [
        KEY_HEX.to_string(),
        format!("  {KEY_HEX}\r\n"),
        format!("\n\t{}\n\n", KEY_HEX.to_uppercase()),
    ]
    .iter()
    .enumerate()
    {
        let path = dir.path().join(format!("k{i}"));
        fs::write(&path, text).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        let key = KeyFile::read(&path).unwrap();
        let masked = Masker::new(&Layout::twitter(), key.key())
            .unwrap()
            .mask(id)
            .unwrap();
        assert_eq!(masked, expected, "{text:?}");
    }
}

/// Each way a key file can be wrong has its own message, naming the path
/// and never showing the file's text, even when that text is nearly a key.
#[test]
fn bad_key_files_say_what_is_wrong_without_showing_it() {
    let dir = tempfile::tempdir().unwrap();
    let near_key = format!("{}g{}", &KEY_HEX[..20], &KEY_HEX[21..]);
    let cases: Vec<(&str, Vec<u8>, String)> = vec![
        ("empty", b"\n \n".to_vec(), "is empty".into()),
        (
            "short",
            KEY_HEX.as_bytes()[..62].to_vec(),
            "holds 62 characters".into(),
        ),
        (
            "two",
            format!("{KEY_HEX}\n{KEY_HEX}\n").into_bytes(),
            "holds 129 characters".into(),
        ),
        (
            "typo",
            near_key.clone().into_bytes(),
            "holds a character that is not hexadecimal (0-9, a-f) at position 21".into(),
        ),
        (
            "binary",
            {
                let mut bytes = KEY_HEX.as_bytes().to_vec();
                bytes[9] = 0xff;
                bytes
            },
            "holds a character that is not hexadecimal (0-9, a-f) at position 10".into(),
        ),
        (
            "large",
            vec![b'a'; 5000],
            "is larger than 4096 bytes".into(),
        ),
    ];
    for (name, content, problem) in cases {
        let path = dir.path().join(name);
        fs::write(&path, &content).unwrap();
        let err = KeyFile::read(&path).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{name}");
        let message = err.to_string();
        assert_eq!(
            message,
            format!(
                "key file {} {problem}; a key is 64 hexadecimal characters (256 bits), with \
                 whitespace around them allowed, as `snowflake mask-key new` writes it",
                path.display()
            )
        );
        let text = String::from_utf8_lossy(&content).into_owned();
        assert!(
            pieces_of(&text, &format!("{message} {err:?}")).is_empty(),
            "{message}"
        );
        assert!(
            pieces_of(KEY_HEX, &format!("{message} {err:?}")).is_empty(),
            "{message}"
        );
    }
}

#[test]
fn missing_unreadable_and_directory_key_files_name_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.key");
    assert_eq!(
        KeyFile::read(&missing).unwrap_err().to_string(),
        format!(
            "cannot read key file {}: there is no such file",
            missing.display()
        )
    );
    let err = KeyFile::read(dir.path()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(
        err.to_string(),
        format!(
            "cannot read key file {}: it is a directory",
            dir.path().display()
        )
    );
    let missing_dir = dir.path().join("no/such/dir/mask.key");
    let err = KeyFile::create_new(&missing_dir).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot create key file {}: its directory does not exist",
            missing_dir.display()
        )
    );
}

#[test]
fn a_key_file_others_may_read_or_change_gets_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mask.key");
    fs::write(&path, KEY_HEX).unwrap();
    for private in [0o600, 0o400] {
        fs::set_permissions(&path, fs::Permissions::from_mode(private)).unwrap();
        assert_eq!(KeyFile::read(&path).unwrap().warning(), None, "{private:o}");
    }
    for open in [0o644, 0o640, 0o604, 0o620, 0o602] {
        fs::set_permissions(&path, fs::Permissions::from_mode(open)).unwrap();
        let warning = KeyFile::read(&path).unwrap().warning().unwrap();
        assert_eq!(
            warning,
            format!(
                "key file {p} can be read or changed by users other than its owner (mode {open:03o}); \
                 anyone who reads it can unmask every ID masked with it; make it private: chmod 600 {p}",
                p = path.display()
            )
        );
    }
}

/// The key pasted where its file's name goes, alone or nearly: each path
/// holds 32 or more of its hexadecimal digits, so none is shown.
fn near_keys() -> Vec<String> {
    vec![
        KEY_HEX.to_string(),
        KEY_HEX.to_uppercase(),
        format!(" {KEY_HEX}\n"),
        format!("0x{KEY_HEX}"),
        format!("./{KEY_HEX}"),
        format!("some/dir/{KEY_HEX}"),
        format!("key={KEY_HEX}"),
        KEY_HEX[..63].to_string(),
        format!("{KEY_HEX}0"),
        format!("{}g{}", &KEY_HEX[..40], &KEY_HEX[41..]),
        KEY_HEX[..32].to_string(),
        KEY_HEX
            .as_bytes()
            .chunks(8)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect::<Vec<_>>()
            .join("-"),
    ]
}

/// A key given where the path goes is not echoed back, in any error or
/// warning about the file, or in its name or `Debug`; and each message
/// still says what went wrong.
#[test]
fn a_path_that_may_hold_the_key_is_not_shown() {
    let dir = tempfile::tempdir().unwrap();
    let shown = |message: &str| {
        assert!(pieces_of(KEY_HEX, message).is_empty(), "{message}");
        assert!(
            message.contains("(name not shown: it holds 32 or more hexadecimal digits"),
            "{message}"
        );
    };
    for (i, text) in near_keys().into_iter().enumerate() {
        // Not there: named relative to a directory without it.
        let missing = dir.path().join(text.trim());
        let err = KeyFile::read(&missing).unwrap_err();
        let message = format!("{err} {err:?}");
        shown(&message);
        assert!(message.contains("there is no such file"), "{message}");
        assert!(message.contains("never the key itself"), "{message}");
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        // A directory to put it in, that is not there.
        let nowhere = dir.path().join("no").join(text.trim().replace('/', "_"));
        let err = KeyFile::create_new(&nowhere).unwrap_err();
        shown(&err.to_string());
        assert!(err.to_string().contains("its directory does not exist"));
        // There, but not a key, then open to others.
        let place = dir.path().join(format!("{i}"));
        fs::create_dir(&place).unwrap();
        let named = place.join(text.trim().replace('/', "_"));
        fs::write(&named, "c0ffee\n").unwrap();
        let err = KeyFile::read(&named).unwrap_err();
        shown(&err.to_string());
        assert!(err.to_string().contains("holds 6 characters"));
        fs::write(&named, format!("{OTHER}\n")).unwrap();
        fs::set_permissions(&named, fs::Permissions::from_mode(0o644)).unwrap();
        let file = KeyFile::read(&named).unwrap();
        let warning = file.warning().unwrap();
        shown(&warning);
        assert!(warning.ends_with("(mode 644); anyone who reads it can unmask every ID masked with it; make it private: chmod 600 it"), "{warning}");
        shown(&file.name());
        shown(&format!("{file:?}"));
        // Already there: never overwritten.
        let err = KeyFile::create_new(&named).unwrap_err();
        shown(&err.to_string());
        assert!(err.to_string().contains("it exists already"));
    }
}
