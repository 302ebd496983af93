//! The generator's state in shared memory, and the writer word.
//!
//! The postmaster asks for the memory as the library loads and sets it up
//! before it forks the first backend; every backend inherits the address.
//! After a backend is killed the postmaster resets shared memory, and the
//! state starts over as "not resumed" (see the crate's Design, 3).
//!
//! The writer word is a CAS lock held for one mark write or one resume. It
//! is not an LWLock because a mark write waits on WAL and on the
//! sequence's relation lock, which must stay interruptible; the word is
//! freed by a guard on unwinding (an SQL error) and by an exit callback
//! (a backend that ends while holding it).

use std::ffi::{CStr, c_long};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicPtr, Ordering};

use pgrx::pg_sys;
use snowflake::SharedState;

use crate::backoff::Backoff;

/// What the server's backends share. Atomics only: no pointer, no drop.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct Shared {
    /// The core's state word.
    pub(crate) state: SharedState,
    /// The highest Unix millisecond a durable mark covers; `i64::MIN`
    /// until the state is resumed.
    pub(crate) mark_ms: AtomicI64,
    /// The pid of the backend writing the mark or resuming the state; 0
    /// when none is.
    writer: AtomicI32,
    /// Whether the state was resumed since shared memory was set up.
    ready: AtomicBool,
}

/// Where `Shared` is: set by the postmaster, inherited by every backend.
static SHARED: AtomicPtr<Shared> = AtomicPtr::new(ptr::null_mut());

const NAME: &CStr = c"snowflake generator";

/// Whether the library is being loaded from `shared_preload_libraries`,
/// by the postmaster: the one time shared memory can be asked for.
pub(crate) fn preloading() -> bool {
    // SAFETY: a flag the postmaster sets while it loads the preloaded
    // libraries, read in the process that is loading this one.
    unsafe { pg_sys::process_shared_preload_libraries_in_progress }
}

/// Asks for the shared memory; called as the library is preloaded.
pub(crate) fn request() {
    // SAFETY: the hooks are chained in the postmaster while it loads the
    // preloaded libraries, before any other process exists; the previous
    // hook is kept and called first.
    unsafe {
        PREVIOUS_REQUEST = pg_sys::shmem_request_hook;
        pg_sys::shmem_request_hook = Some(on_request);
        PREVIOUS_STARTUP = pg_sys::shmem_startup_hook;
        pg_sys::shmem_startup_hook = Some(on_startup);
    }
}

static mut PREVIOUS_REQUEST: pg_sys::shmem_request_hook_type = None;
static mut PREVIOUS_STARTUP: pg_sys::shmem_startup_hook_type = None;

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn on_request() {
    // SAFETY: called by the postmaster in its shared-memory request phase,
    // the one place RequestAddinShmemSpace may be called; the previous hook
    // was saved in `request` before this one was installed.
    unsafe {
        if let Some(previous) = PREVIOUS_REQUEST {
            previous();
        }
        pg_sys::RequestAddinShmemSpace(size_of::<Shared>());
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn on_startup() {
    // SAFETY: called by the postmaster as it sets up shared memory (at its
    // start and after a crash reset), with the space asked for in
    // `on_request`; AddinShmemInitLock (MainLWLockArray[21]) is the lock
    // PostgreSQL's own modules take around ShmemInitStruct. A freshly made
    // struct is written whole before the pointer is published.
    unsafe {
        if let Some(previous) = PREVIOUS_STARTUP {
            previous();
        }
        let init_lock = &raw mut (*pg_sys::MainLWLockArray.add(21)).lock;
        pg_sys::LWLockAcquire(init_lock, pg_sys::LWLockMode::LW_EXCLUSIVE);
        let mut found = false;
        let shared = pg_sys::ShmemInitStruct(NAME.as_ptr(), size_of::<Shared>(), &mut found)
            .cast::<Shared>();
        if !found {
            shared.write(Shared {
                state: SharedState::new(),
                mark_ms: AtomicI64::new(i64::MIN),
                writer: AtomicI32::new(0),
                ready: AtomicBool::new(false),
            });
        }
        SHARED.store(shared, Ordering::Release);
        pg_sys::LWLockRelease(init_lock);
    }
}

/// The shared state, or `None` when the library was not preloaded.
pub(crate) fn get() -> Option<&'static Shared> {
    // SAFETY: the pointer is null or points at the struct the postmaster
    // set up in shared memory, mapped at the same address in every backend
    // for the process's whole life.
    unsafe { SHARED.load(Ordering::Acquire).as_ref() }
}

impl Shared {
    /// Whether the state was resumed since the server started.
    pub(crate) fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// Marks the state resumed; called by the writer once it has.
    pub(crate) fn set_ready(&self, _writing: &Writing<'_>) {
        self.ready.store(true, Ordering::Release);
    }

    /// The writer word, if no one holds it.
    pub(crate) fn try_write(&self) -> Option<Writing<'_>> {
        release_on_exit();
        let me = my_pid();
        self.writer
            .compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| Writing(self))
    }

    /// Waits until `done` holds (`None`) or the writer word is this
    /// backend's (`Some`: then `done` is to be checked again and made to
    /// hold). Cancellable: it waits in sleeps that look for interrupts,
    /// growing as the wait does ([`Backoff`]). While it sleeps,
    /// `pg_stat_activity` shows the wait event `Extension` (type
    /// `Extension`), the one PostgreSQL keeps for extensions' own waits.
    pub(crate) fn write_or_wait(&self, done: impl Fn(&Shared) -> bool) -> Option<Writing<'_>> {
        let mut backoff = Backoff::new();
        loop {
            if done(self) {
                return None;
            }
            if let Some(writing) = self.try_write() {
                return Some(writing);
            }
            let sleep_us = c_long::try_from(backoff.next_us()).unwrap_or(c_long::MAX);
            // SAFETY: a plain sleep of this backend, outside any critical
            // section, reported as a wait event and ended before anything
            // else runs; the interrupt check may raise an SQL error, which
            // unwinds nothing held.
            unsafe {
                pg_sys::pgstat_report_wait_start(pg_sys::PG_WAIT_EXTENSION);
                pg_sys::pg_usleep(sleep_us);
                pg_sys::pgstat_report_wait_end();
            }
            pgrx::check_for_interrupts!();
        }
    }
}

/// The writer word, held; freed on drop, unwinding included.
pub(crate) struct Writing<'a>(&'a Shared);

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.0.writer.store(0, Ordering::Release);
    }
}

impl std::fmt::Debug for Writing<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Writing")
    }
}

fn my_pid() -> i32 {
    // SAFETY: set once as the backend starts, read-only after.
    unsafe { pg_sys::MyProcPid }
}

/// Registers, once per backend, the exit callback that frees the writer
/// word if the backend ends while holding it (a FATAL error, a
/// terminated backend): nothing unwinds then.
fn release_on_exit() {
    static REGISTERED: AtomicBool = AtomicBool::new(false);
    if REGISTERED.swap(true, Ordering::Relaxed) {
        return;
    }
    #[pgrx::pg_guard]
    unsafe extern "C-unwind" fn on_exit(_code: i32, _arg: pg_sys::Datum) {
        if let Some(shared) = get() {
            let _ =
                shared
                    .writer
                    .compare_exchange(my_pid(), 0, Ordering::AcqRel, Ordering::Acquire);
        }
    }
    // SAFETY: registers a callback with no argument for this backend's exit,
    // from the backend itself, outside any critical section.
    unsafe { pg_sys::before_shmem_exit(Some(on_exit), pg_sys::Datum::from(0)) };
}
