//! Short card lists kept inline in the few protobuf messages that games emit many times per
//! match (a row per seat at every deal, the cards of every trick). Generated messages hold each
//! `repeated Card` in a heap vector, and allocating and freeing those was a large share of a
//! random match. Such a message is a plain struct whose `prost::Message` comes from
//! [`inline_message!`]; it encodes byte for byte as the generated one (proto3 scalars, packed
//! cards) and reads packed or unpacked input. `build.rs` points prost at it with `extern_path`.

use prost::bytes::{Buf, BufMut};
use prost::encoding::{int32, uint32, DecodeContext, WireType};
use prost::DecodeError;

/// A field of an [`inline_message!`] struct, encoded as proto3 encodes it: `u32` as `uint32`,
/// `i32` as `int32` (also every enum), both omitted when zero; [`InlineCards`] packed.
pub trait Field {
    fn encode(&self, tag: u32, buf: &mut impl BufMut);
    fn merge(
        &mut self,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError>;
    fn encoded_len(&self, tag: u32) -> usize;
}

/// A proto3 scalar: omitted when zero.
macro_rules! scalar_field {
    ($ty:ty, $encoding:ident) => {
        impl Field for $ty {
            fn encode(&self, tag: u32, buf: &mut impl BufMut) {
                if *self != 0 {
                    $encoding::encode(tag, self, buf);
                }
            }
            fn merge(
                &mut self,
                wire_type: WireType,
                buf: &mut impl Buf,
                ctx: DecodeContext,
            ) -> Result<(), DecodeError> {
                $encoding::merge(wire_type, self, buf, ctx)
            }
            fn encoded_len(&self, tag: u32) -> usize {
                if *self != 0 {
                    $encoding::encoded_len(tag, self)
                } else {
                    0
                }
            }
        }
    };
}
scalar_field!(u32, uint32);
scalar_field!(i32, int32);

/// `prost::Message` for a struct of [`Field`]s: `inline_message!(Name { 1 => a, 2 => b })`
/// with the proto's tags. The struct derives `Default`.
macro_rules! inline_message {
    ($name:ident { $($tag:literal => $field:ident),+ $(,)? }) => {
        impl prost::Message for $name {
            fn encode_raw(&self, buf: &mut impl prost::bytes::BufMut) {
                $( $crate::games::inline_cards::Field::encode(&self.$field, $tag, buf); )+
            }

            fn merge_field(
                &mut self,
                tag: u32,
                wire_type: prost::encoding::WireType,
                buf: &mut impl prost::bytes::Buf,
                ctx: prost::encoding::DecodeContext,
            ) -> Result<(), prost::DecodeError> {
                match tag {
                    $( $tag => $crate::games::inline_cards::Field::merge(&mut self.$field, wire_type, buf, ctx), )+
                    _ => prost::encoding::skip_field(wire_type, tag, buf, ctx),
                }
            }

            fn encoded_len(&self) -> usize {
                0 $( + $crate::games::inline_cards::Field::encoded_len(&self.$field, $tag) )+
            }

            fn clear(&mut self) {
                *self = Self::default();
            }
        }
    };
}
pub(crate) use inline_message;

/// At most `N` protobuf cards, used as a slice. A stored list longer than `N` reads as empty,
/// which no game accepts where a full list is due (`Corrupt` on replay).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct InlineCards<const N: usize> {
    len: u8,
    overflow: bool,
    cards: [i32; N],
}

impl<const N: usize> Default for InlineCards<N> {
    fn default() -> Self {
        InlineCards {
            len: 0,
            overflow: false,
            cards: [0; N],
        }
    }
}

impl<const N: usize> Field for InlineCards<N> {
    /// Packed; nothing when empty.
    fn encode(&self, tag: u32, buf: &mut impl BufMut) {
        int32::encode_packed(tag, self, buf);
    }

    /// Reads one occurrence of the field (packed or not) and appends its cards.
    fn merge(
        &mut self,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        let mut more = Vec::new();
        int32::merge_repeated(wire_type, &mut more, buf, ctx)?;
        self.extend(more);
        Ok(())
    }

    fn encoded_len(&self, tag: u32) -> usize {
        int32::encoded_len_packed(tag, self)
    }
}

impl<const N: usize> Extend<i32> for InlineCards<N> {
    fn extend<I: IntoIterator<Item = i32>>(&mut self, cards: I) {
        for c in cards {
            if self.len as usize == N {
                self.overflow = true;
                return;
            }
            self.cards[self.len as usize] = c;
            self.len += 1;
        }
    }
}

impl<const N: usize> FromIterator<i32> for InlineCards<N> {
    fn from_iter<I: IntoIterator<Item = i32>>(cards: I) -> Self {
        let mut out = InlineCards::default();
        out.extend(cards);
        out
    }
}

impl<const N: usize> From<[i32; N]> for InlineCards<N> {
    fn from(cards: [i32; N]) -> Self {
        InlineCards {
            len: N as u8,
            overflow: false,
            cards,
        }
    }
}

impl<const N: usize> std::ops::Deref for InlineCards<N> {
    type Target = [i32];
    fn deref(&self) -> &[i32] {
        &self.cards[..if self.overflow { 0 } else { self.len as usize }]
    }
}

impl<const N: usize> std::ops::DerefMut for InlineCards<N> {
    fn deref_mut(&mut self) -> &mut [i32] {
        &mut self.cards[..if self.overflow { 0 } else { self.len as usize }]
    }
}

impl<const N: usize> std::fmt::Debug for InlineCards<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
