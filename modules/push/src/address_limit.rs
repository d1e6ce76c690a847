//! How fast one address may make new push clients: a token bucket per address, so
//! one visitor asking for `hello` after `hello` cannot fill the site's client
//! table (a page makes one client; a reconnect with its token makes none).
//!
//! Addresses are grouped as one visitor holds them: an IPv4 address alone, an IPv6
//! address by its /64 (one host usually has a whole /64 to pick from). The table
//! is bounded: a bucket that has filled up again is the same as none and is swept
//! out when the table is full; if it is still full (a flood from more addresses
//! than it holds), the addresses it has no room for share one bucket, so they are
//! limited together rather than not at all. Behind a reverse proxy every visitor
//! has the proxy's address: raise the limit there.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bulwark_push::{Rate, TokenBucket};

/// Addresses tracked at most (about 64 bytes each).
const MAX_ADDRESSES: usize = 65_536;
/// A full table is swept at most this often (a sweep walks the whole table).
const SWEEP_INTERVAL: Duration = Duration::from_secs(1);

/// The addresses one visitor is taken to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct AddressGroup(IpAddr);

impl AddressGroup {
    fn of(ip: IpAddr) -> AddressGroup {
        AddressGroup(bulwark_http::visitor_network(ip))
    }
}

pub(crate) struct NewClientsPerAddress {
    rate: Rate,
    table: Mutex<Table>,
}

struct Table {
    buckets: HashMap<AddressGroup, TokenBucket>,
    /// Shared by the addresses a full table has no room for.
    overflow: TokenBucket,
    last_sweep: Instant,
}

impl NewClientsPerAddress {
    pub(crate) fn new(rate: Rate) -> NewClientsPerAddress {
        NewClientsPerAddress {
            rate,
            table: Mutex::new(Table {
                buckets: HashMap::new(),
                overflow: TokenBucket::new(rate),
                last_sweep: Instant::now(),
            }),
        }
    }

    /// Whether `ip` may make a new client now, or how long until it may.
    pub(crate) fn admit(&self, ip: IpAddr) -> Result<(), Duration> {
        let group = AddressGroup::of(ip);
        let rate = self.rate;
        let mut table = self.table.lock().expect("address table");
        let table = &mut *table;
        if let Some(bucket) = table.buckets.get_mut(&group) {
            return bucket.take(rate);
        }
        if table.buckets.len() >= MAX_ADDRESSES && table.last_sweep.elapsed() >= SWEEP_INTERVAL {
            table.last_sweep = Instant::now();
            let refilled = rate.refill_time();
            table.buckets.retain(|_, b| b.idle() < refilled);
        }
        if table.buckets.len() >= MAX_ADDRESSES {
            return table.overflow.take(rate);
        }
        table
            .buckets
            .entry(group)
            .or_insert_with(|| TokenBucket::new(rate))
            .take(rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_addresses_are_grouped_by_their_64_bit_prefix() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let other: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(AddressGroup::of(a), AddressGroup::of(b));
        assert_ne!(AddressGroup::of(a), AddressGroup::of(other));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        let v4: IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(AddressGroup::of(mapped), AddressGroup::of(v4));
        assert_ne!(
            AddressGroup::of(v4),
            AddressGroup::of("192.0.2.8".parse().unwrap())
        );
    }

    #[test]
    fn each_address_group_has_its_own_budget() {
        let limit = NewClientsPerAddress::new(Rate {
            per_second: 0.001,
            burst: 2,
        });
        let a: IpAddr = "2001:db8::1".parse().unwrap();
        let same: IpAddr = "2001:db8::2".parse().unwrap();
        assert!(limit.admit(a).is_ok());
        assert!(limit.admit(same).is_ok());
        assert!(limit.admit(a).is_err());
        assert!(limit.admit("192.0.2.1".parse().unwrap()).is_ok());
    }
}
