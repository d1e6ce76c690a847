//! How much memory a cached value takes.
//!
//! The byte budget needs a size per entry. Asking the value is cheaper and more
//! honest than guessing from `size_of` (a `String`'s heap buffer is most of it), and a
//! trait keeps the choice with the type that knows its layout. Sizes are estimates:
//! the budget bounds memory roughly, it does not account for the allocator.

use std::mem::size_of;
use std::sync::Arc;

/// A value that can tell roughly how many bytes it occupies, heap included.
pub trait Weigh {
    /// Approximate size in bytes.
    fn weigh(&self) -> usize;
}

macro_rules! weigh_with_heap {
    ($($ty:ty => $heap:ident),* $(,)?) => {
        $(impl Weigh for $ty {
            fn weigh(&self) -> usize {
                size_of::<Self>() + self.$heap()
            }
        })*
    };
}

// Owned growable buffers hold their capacity; shared and boxed ones their length.
weigh_with_heap!(
    String => capacity,
    Vec<u8> => capacity,
    Box<str> => len,
    Box<[u8]> => len,
    Arc<str> => len,
    Arc<[u8]> => len,
);

impl<T: Weigh> Weigh for Option<T> {
    fn weigh(&self) -> usize {
        size_of::<Self>()
            + self
                .as_ref()
                .map_or(0, |value| value.weigh().saturating_sub(size_of::<T>()))
    }
}

macro_rules! weigh_by_size_of {
    ($($ty:ty),*) => {
        $(impl Weigh for $ty {
            fn weigh(&self) -> usize {
                size_of::<Self>()
            }
        })*
    };
}

weigh_by_size_of!(
    (),
    bool,
    char,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_weight_counts_its_heap_buffer() {
        let text = String::from_utf8(vec![b'a'; 1000]).unwrap();
        assert!(text.weigh() >= 1000);
        assert_eq!(7u64.weigh(), 8);
        assert_eq!(Some(7u64).weigh(), size_of::<Option<u64>>());
    }
}
