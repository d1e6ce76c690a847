//! Observers by event type: the one structure [`Observers`](crate::Observers) fills
//! and [`Notifier`](crate::Notifier) reads.
//!
//! Each event type has one list, sorted by priority as it is filled, so freezing
//! the table costs nothing and a delivery walks a slice. The lists have different
//! types (their observers' signatures depend on the event), so the map holds them
//! type-erased and a lookup by `TypeId::of::<E>()` downcasts back to `E`'s list.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::panic::Location;

use crate::event::{Delivery, Event};

/// The signature of an observer of `E`, from `E`'s delivery.
type ObserverFn<E> = <<E as Event>::Delivery as Delivery>::Observer<E>;

pub(crate) struct Registered<E: Event> {
    pub(crate) priority: i32,
    /// Where the observer was added, which names the module that owns it.
    pub(crate) registered_at: &'static Location<'static>,
    pub(crate) call: Box<ObserverFn<E>>,
}

impl<E: Event> fmt::Debug for Registered<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", self.priority, self.registered_at)
    }
}

/// One event type's observers, with the type erased.
trait ObserverList: Any + Send + Sync + fmt::Debug {
    fn event_name(&self) -> &'static str;
}

impl<E: Event> ObserverList for Vec<Registered<E>> {
    fn event_name(&self) -> &'static str {
        type_name::<E>()
    }
}

#[derive(Default)]
pub(crate) struct ObserverTable {
    lists: HashMap<TypeId, Box<dyn ObserverList>, BuildHasherDefault<TypeIdHasher>>,
}

impl ObserverTable {
    /// Adds `call` after the observers of `E` whose priority is lower or equal, so
    /// equal priorities keep their registration order.
    #[track_caller]
    pub(crate) fn register<E: Event>(&mut self, priority: i32, call: Box<ObserverFn<E>>) {
        let list = self
            .lists
            .entry(TypeId::of::<E>())
            .or_insert_with(|| Box::new(Vec::<Registered<E>>::new()));
        let list = (&mut **list as &mut dyn Any)
            .downcast_mut::<Vec<Registered<E>>>()
            .expect("the list under E's TypeId holds E's observers");
        let position = list.partition_point(|observer| observer.priority <= priority);
        list.insert(
            position,
            Registered {
                priority,
                registered_at: Location::caller(),
                call,
            },
        );
    }

    /// `E`'s observers in priority order; empty, without allocating, when it has none.
    pub(crate) fn observers<E: Event>(&self) -> &[Registered<E>] {
        match self.lists.get(&TypeId::of::<E>()) {
            Some(list) => (&**list as &dyn Any)
                .downcast_ref::<Vec<Registered<E>>>()
                .expect("the list under E's TypeId holds E's observers"),
            None => &[],
        }
    }
}

impl fmt::Debug for ObserverTable {
    /// Every observed event type with its observers' priorities and registration
    /// places, by event name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut lists: Vec<_> = self.lists.values().collect();
        lists.sort_by_key(|list| list.event_name());
        f.debug_map()
            .entries(lists.into_iter().map(|list| (list.event_name(), list)))
            .finish()
    }
}

/// Passes a `TypeId` through unchanged: the 64 bits its `Hash` writes are already a
/// hash of the type, and SipHash over them made delivering an event nobody
/// observes cost 13 ns instead of 3. Bytes written any other way are mixed with
/// FNV-1a, so the table stays correct if `TypeId` ever hashes otherwise.
#[derive(Default)]
struct TypeIdHasher(u64);

const FNV_PRIME: u64 = 0x0100_0000_01b3;

impl Hasher for TypeIdHasher {
    fn write_u64(&mut self, n: u64) {
        self.0 = self.0.wrapping_mul(FNV_PRIME) ^ n;
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(FNV_PRIME);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use std::any::TypeId;
    use std::hash::{Hash, Hasher};

    use super::TypeIdHasher;

    #[test]
    fn a_type_id_hashes_to_the_64_bits_it_writes() {
        struct Observed;
        let mut hasher = TypeIdHasher::default();
        TypeId::of::<Observed>().hash(&mut hasher);
        let mut written = Written::default();
        TypeId::of::<Observed>().hash(&mut written);
        assert_eq!(written.0, [hasher.finish()]);
    }

    /// Records what a `Hash` impl writes, as `u64` calls.
    #[derive(Default)]
    struct Written(Vec<u64>);

    impl Hasher for Written {
        fn write_u64(&mut self, n: u64) {
            self.0.push(n);
        }
        fn write(&mut self, _: &[u8]) {
            panic!("TypeId wrote bytes, not one u64: the pass-through is lost");
        }
        fn finish(&self) -> u64 {
            0
        }
    }
}
