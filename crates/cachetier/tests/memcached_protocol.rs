//! The memcached client against a real server: text and meta commands, CAS semantics,
//! pipelined batches, and the replica's failure detection and rejoin.

mod common;

use common::Memcached;
use std::time::Duration;
use superlinear_cachetier::coherence::{self, Cached};
use superlinear_cachetier::memcache::{McConn, Replica, SetMode, StoreStatus};

const T: Duration = Duration::from_secs(2);

#[test]
fn text_commands_and_cas() {
    let Some(mc) = Memcached::start(8) else { return };
    let mut c = McConn::connect(&mc.endpoint(), T).unwrap();
    assert!(c.version().unwrap().starts_with('1'));
    assert_eq!(c.gets(b"a").unwrap(), None);
    assert_eq!(c.store(SetMode::Set, b"a", b"one", 5, None).unwrap(), StoreStatus::Stored(0));
    let item = c.gets(b"a").unwrap().unwrap();
    assert_eq!((item.data.as_slice(), item.flags), (&b"one"[..], 5));
    assert_eq!(c.store(SetMode::Add, b"a", b"x", 0, None).unwrap(), StoreStatus::NotStored);
    assert_eq!(c.store(SetMode::Set, b"a", b"two", 0, Some(item.cas)).unwrap(), StoreStatus::Stored(0));
    assert_eq!(c.store(SetMode::Set, b"a", b"three", 0, Some(item.cas)).unwrap(), StoreStatus::Exists);
    c.store(SetMode::Set, b"b", b"bee", 0, None).unwrap();
    let many = c.gets_many(&[b"b", b"zz", b"a"]).unwrap();
    assert_eq!(many[0].as_ref().unwrap().data, b"bee");
    assert!(many[1].is_none());
    assert_eq!(many[2].as_ref().unwrap().data, b"two");
    assert!(c.delete(b"a").unwrap());
    assert!(!c.delete(b"a").unwrap());
    assert!(c.stats(None).unwrap().contains_key("curr_items"));
    c.flush_all().unwrap();
    assert_eq!(c.gets(b"b").unwrap(), None);
    assert!(c.store(SetMode::Set, b"bad key", b"x", 0, None).is_err());
}

#[test]
fn meta_commands_return_and_compare_cas() {
    let Some(mc) = Memcached::start(8) else { return };
    let mut c = McConn::connect(&mc.endpoint(), T).unwrap();
    assert_eq!(c.mg(b"k").unwrap(), None);
    let StoreStatus::Stored(cas) = c.ms(b"k", b"v1", 3, SetMode::Add, None).unwrap() else { panic!() };
    assert!(cas > 0);
    let item = c.mg(b"k").unwrap().unwrap();
    assert_eq!((item.data.as_slice(), item.flags, item.cas), (&b"v1"[..], 3, cas));
    assert_eq!(c.ms(b"k", b"v2", 0, SetMode::Add, None).unwrap(), StoreStatus::NotStored);
    assert!(matches!(c.ms(b"k", b"v2", 4, SetMode::Set, Some(cas)).unwrap(), StoreStatus::Stored(_)));
    assert_eq!(c.ms(b"k", b"v3", 4, SetMode::Set, Some(cas)).unwrap(), StoreStatus::Exists);
    assert_eq!(c.ms(b"gone", b"v", 0, SetMode::Set, Some(1)).unwrap(), StoreStatus::NotFound);
    // 2000 quiet sets in one round trip.
    let keys: Vec<Vec<u8>> = (0..2000).map(|i| format!("b{i}").into_bytes()).collect();
    let failed = c.ms_batch(keys.iter().map(|k| (k.as_slice(), &b"val"[..], 1u32))).unwrap();
    assert_eq!(failed, 0);
    assert_eq!(c.mg(b"b1999").unwrap().unwrap().data, b"val");
    assert!(c.md(b"b0").unwrap());
    assert!(!c.md(b"b0").unwrap());
}

#[test]
fn two_phase_protocol_never_lowers_a_version() {
    let Some(mc) = Memcached::start(8) else { return };
    let r = Replica::new(mc.endpoint(), T);
    // A reader saw nothing and fills version 1; a writer of version 2 tombstones it.
    assert!(coherence::fill(&r, b"x", Cached::Absent, b"one", 1).unwrap());
    let cas2 = coherence::invalidate(&r, b"x", 2).unwrap().expect("tombstone installed");
    // A slow reader that saw the absence earlier cannot add its old value any more.
    assert!(!coherence::fill(&r, b"x", Cached::Absent, b"one", 1).unwrap());
    // A writer of version 3 overtakes; the version-2 writer's phase 2 then fails by CAS.
    let cas3 = coherence::invalidate(&r, b"x", 3).unwrap().unwrap();
    assert!(!coherence::update(&r, b"x", b"two", 2, cas2).unwrap());
    // A late phase 1 of version 2 sees version 3 and leaves it.
    assert_eq!(coherence::invalidate(&r, b"x", 2).unwrap(), None);
    assert!(coherence::update(&r, b"x", b"three", 3, cas3).unwrap());
    let item = r.with(|c| c.mg(b"x")).unwrap().unwrap();
    assert_eq!((item.data.as_slice(), Cached::of(Some(&item)).version()), (&b"three"[..], 3));
}

#[test]
fn replica_goes_down_and_rejoins_flushed() {
    let Some(mut mc) = Memcached::start(8) else { return };
    let r = Replica::new(mc.endpoint(), Duration::from_millis(300));
    r.with(|c| c.ms(b"k", b"v", 1, SetMode::Set, None)).unwrap();
    mc.kill();
    assert!(r.with(|c| c.mg(b"k")).is_err());
    assert!(!r.is_up());
    assert!(r.with(|c| c.mg(b"k")).is_err(), "a down replica is not asked");
    mc.restart(8);
    // Seed the restarted server with a value that must not survive the rejoin flush.
    McConn::connect(&mc.endpoint(), T).unwrap().ms(b"k", b"stale", 1, SetMode::Set, None).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !r.try_rejoin() {
        assert!(std::time::Instant::now() < deadline, "did not rejoin");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(r.epoch(), 1);
    assert_eq!(r.with(|c| c.mg(b"k")).unwrap(), None, "flushed before rejoining");
}
