//! Task storage: one heap block per task holding its future and, once it
//! returns, its output, with the blocks of finished runs kept for the next.
//!
//! A hunt runs millions of short executions, each spawning a few tasks. A
//! `Box<dyn Future>` per task plus an `Rc` for its join result would be two
//! allocations and two frees per task per run; here a task is one block
//! taken from (and given back to) a free list by size class, and its output
//! lands in the same block, where [`crate::JoinHandle`] reads it.
//!
//! The layout is `#[repr(C)]` with the output right after the header, so a
//! handle that knows only the output type `T` (not the future's type) finds
//! it: [`TaskCell::take_output`].

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll};

/// What a block needs to know about the future type it holds.
struct VTable {
    /// Polls the future; on `Ready` stores the output and drops the future
    /// in place (inside the poll, so guards it owns release as this task).
    poll: unsafe fn(NonNull<Header>, &mut Context<'_>) -> Poll<()>,
    /// Drops whatever the block still holds (future and/or output).
    drop: unsafe fn(NonNull<Header>),
    /// The block's own layout (for over-aligned blocks, freed with it).
    layout: Layout,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Header {
    vtable: &'static VTable,
    /// The size class the block came from.
    class: u8,
}

/// The part of every block that does not depend on the future's type.
#[repr(C)]
struct Prefix<T> {
    header: Header,
    output: Option<T>,
}

#[repr(C)]
struct Block<F: Future> {
    header: Header,
    output: Option<F::Output>,
    /// `None` once the future has returned (or before teardown drops it).
    future: Option<F>,
}

impl<F: Future> Block<F> {
    const VTABLE: VTable = VTable { poll: Self::poll, drop: Self::drop, layout: Layout::new::<Block<F>>() };
    /// The size class of this block type, worked out once by the compiler.
    const CLASS: u8 = BlockPool::class_of(Layout::new::<Block<F>>());

    unsafe fn poll(h: NonNull<Header>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: `h` heads a live `Block<F>` (the vtable is this type's),
        // which never moves until it is freed, so pinning its future is sound.
        let b = unsafe { &mut *h.cast::<Block<F>>().as_ptr() };
        let Some(f) = b.future.as_mut() else { return Poll::Ready(()) };
        match unsafe { Pin::new_unchecked(f) }.poll(cx) {
            Poll::Ready(v) => {
                b.output = Some(v);
                // Dropping in place is allowed for pinned data.
                b.future = None;
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }

    unsafe fn drop(h: NonNull<Header>) {
        // SAFETY: as in `poll`; called once, at teardown.
        unsafe { std::ptr::drop_in_place(h.cast::<Block<F>>().as_ptr()) }
    }
}

/// One task's block. A plain pointer: the execution owns the block and
/// gives it back to the [`BlockPool`] at teardown.
#[derive(Clone, Copy)]
pub(crate) struct TaskCell(NonNull<Header>);

impl TaskCell {
    /// Moves `fut` into a block from `pool`.
    pub fn new<F: Future + 'static>(pool: &mut BlockPool, fut: F) -> TaskCell {
        let (ptr, class) = pool.take(Block::<F>::CLASS, Layout::new::<Block<F>>());
        let block = ptr.cast::<Block<F>>();
        // SAFETY: the block is at least `layout` big and aligned (`take`).
        unsafe {
            block.as_ptr().write(Block {
                header: Header { vtable: &Block::<F>::VTABLE, class },
                output: None,
                future: Some(fut),
            });
        }
        TaskCell(block.cast())
    }

    /// Polls the task to its next scheduling point (`Ready` once it returned).
    ///
    /// # Safety
    /// The cell must be live (not yet given back with [`TaskCell::free`]).
    #[inline]
    pub unsafe fn poll(self, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: the header is live (caller's promise).
        unsafe { ((*self.0.as_ptr()).vtable.poll)(self.0, cx) }
    }

    /// Takes the task's output.
    ///
    /// # Safety
    /// The cell must be live and hold a future whose output type is `T`.
    pub unsafe fn take_output<T>(self) -> Option<T> {
        // SAFETY: every `Block<F>` with `F::Output = T` starts with a
        // `Prefix<T>` (both `repr(C)`, same leading fields).
        unsafe { (*self.0.cast::<Prefix<T>>().as_ptr()).output.take() }
    }

    /// Drops what the block holds and gives it back to `pool`.
    ///
    /// # Safety
    /// The cell must be live; it is dead afterwards.
    pub unsafe fn free(self, pool: &mut BlockPool) {
        // SAFETY: caller's promise; class and vtable are read before the drop.
        unsafe {
            let Header { vtable, class } = *self.0.as_ptr();
            (vtable.drop)(self.0);
            if class == UNPOOLED {
                dealloc(self.0.as_ptr().cast(), vtable.layout);
            } else {
                pool.give(self.0.cast(), class);
            }
        }
    }
}

/// Free blocks by size class: class `c` holds blocks of `64 << c` bytes,
/// aligned to [`BlockPool::ALIGN`].
#[derive(Default)]
pub(crate) struct BlockPool {
    free: Vec<Vec<NonNull<u8>>>,
}

/// A block allocated for one use only (over-aligned futures).
const UNPOOLED: u8 = u8::MAX;

impl BlockPool {
    const ALIGN: usize = 16;
    const MIN: usize = 64;

    fn class_layout(class: u8) -> Layout {
        Layout::from_size_align(Self::MIN << class, Self::ALIGN).expect("block size fits")
    }

    /// The size class of blocks of `layout`, or [`UNPOOLED`] for an
    /// over-aligned one (rare enough not to pool: allocated and freed with
    /// its own layout).
    const fn class_of(layout: Layout) -> u8 {
        if layout.align() > Self::ALIGN {
            return UNPOOLED;
        }
        let size = if layout.size() > Self::MIN { layout.size() } else { Self::MIN };
        (size.next_power_of_two().trailing_zeros() - Self::MIN.trailing_zeros()) as u8
    }

    /// A block of `layout`, whose class is `class` (from [`BlockPool::class_of`]).
    #[inline]
    fn take(&mut self, class: u8, layout: Layout) -> (NonNull<u8>, u8) {
        if class == UNPOOLED {
            return (Self::alloc(layout), UNPOOLED);
        }
        if let Some(p) = self.free.get_mut(class as usize).and_then(Vec::pop) {
            return (p, class);
        }
        (Self::alloc(Self::class_layout(class)), class)
    }

    fn alloc(layout: Layout) -> NonNull<u8> {
        // SAFETY: every block layout has a non-zero size (the header).
        NonNull::new(unsafe { alloc(layout) }).unwrap_or_else(|| handle_alloc_error(layout))
    }

    /// Takes back a block that `take` handed out from `class`.
    fn give(&mut self, p: NonNull<u8>, class: u8) {
        if self.free.len() <= class as usize {
            self.free.resize_with(class as usize + 1, Vec::new);
        }
        self.free[class as usize].push(p);
    }
}

impl Drop for BlockPool {
    fn drop(&mut self) {
        for (class, blocks) in self.free.iter().enumerate() {
            for &p in blocks {
                // SAFETY: every pooled block was allocated with its class layout.
                unsafe { dealloc(p.as_ptr(), Self::class_layout(class as u8)) }
            }
        }
    }
}
