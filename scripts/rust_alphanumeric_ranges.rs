fn main() {
    // print code point ranges where char::is_alphanumeric() is true
    let mut start: Option<u32> = None;
    let mut prev = 0u32;
    for cp in 0u32..=0x10FFFF {
        let ok = char::from_u32(cp).map(|c| c.is_alphanumeric()).unwrap_or(false);
        match (ok, start) {
            (true, None) => { start = Some(cp); }
            (false, Some(s)) => { println!("{:x} {:x}", s, prev); start = None; }
            _ => {}
        }
        if ok { prev = cp; }
    }
    if let Some(s) = start { println!("{:x} {:x}", s, prev); }
}
