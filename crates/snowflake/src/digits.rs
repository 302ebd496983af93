//! Decimal digits written fast, for the text forms and the dates that a bulk
//! decode writes several of per ID: two digits at a time from a table, and
//! long numbers cut into 8-digit pieces that 32-bit arithmetic finishes, so
//! that the divisions do not wait on each other.

/// "00" to "99".
const PAIRS: [[u8; 2]; 100] = {
    let mut t = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    t
};

/// `v` (below 100) as two digits.
#[inline]
pub(crate) fn two(v: u32) -> [u8; 2] {
    PAIRS[v as usize]
}

/// `v` (below 10,000) as four digits.
#[inline]
pub(crate) fn four(v: u32) -> [u8; 4] {
    let ([a, b], [c, d]) = (two(v / 100), two(v % 100));
    [a, b, c, d]
}

/// `v` (below 10^8) as eight digits.
#[inline]
fn eight(v: u32) -> [u8; 8] {
    let ([a, b, c, d], [e, f, g, h]) = (four(v / 10_000), four(v % 10_000));
    [a, b, c, d, e, f, g, h]
}

/// Writes `n` in decimal so that it ends just before `buf[end]`, without
/// leading zeros; returns where it starts. `buf[..end]` must have room for
/// its digits (20 at most).
#[inline]
pub(crate) fn decimal_back(n: u64, buf: &mut [u8], end: usize) -> usize {
    const E8: u64 = 100_000_000;
    let (high, low) = (n / E8, (n % E8) as u32);
    if high == 0 {
        return small_back(low, buf, end);
    }
    buf[end - 8..end].copy_from_slice(&eight(low));
    let (top, middle) = (high / E8, (high % E8) as u32);
    if top == 0 {
        return small_back(middle, buf, end - 8);
    }
    buf[end - 16..end - 8].copy_from_slice(&eight(middle));
    // u64::MAX / 10^16 is 1844: four digits at most.
    small_back(top as u32, buf, end - 16)
}

/// Writes `v` (below 10^8) so that it ends just before `buf[end]`; returns
/// where it starts.
fn small_back(mut v: u32, buf: &mut [u8], end: usize) -> usize {
    let mut i = end;
    while v >= 100 {
        i -= 2;
        buf[i..i + 2].copy_from_slice(&two(v % 100));
        v /= 100;
    }
    if v >= 10 {
        i -= 2;
        buf[i..i + 2].copy_from_slice(&two(v));
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn every_length_and_edge_matches_display() {
        let mut cases = alloc::vec![0u64, 9, 10, 99, 100, 99_999_999, 100_000_000, u64::MAX];
        let mut p = 1u64;
        while let Some(next) = p.checked_mul(10) {
            cases.extend([p - 1, p, p + 1, next - 1]);
            p = next;
        }
        for n in cases {
            let mut buf = [0u8; 20];
            let start = decimal_back(n, &mut buf, 20);
            assert_eq!(core::str::from_utf8(&buf[start..]).unwrap(), n.to_string());
        }
    }

    #[test]
    fn fixed_widths_keep_leading_zeros() {
        assert_eq!(&four(7), b"0007");
        assert_eq!(&eight(1234), b"00001234");
        assert_eq!(&two(5), b"05");
    }
}
