"""The instance engine of :class:`~rlsched.core.llm.simulator.LLMSimulator`: batches,
iterations, admission and preemption, KV transfers, completion."""

from __future__ import annotations

from heapq import heapify, heappop, heappush

from rlsched.core.llm.cluster import (
    Instance,
)
from rlsched.core.llm.state import _DONE, _DROPPED, _ITER, _KV, MIXED_BATCH_FACTOR, SimulatorState


class InstanceEngine(SimulatorState):
    """What each instance does: iterations, admission, preemption, transfers."""

    def _start(self, inst: Instance) -> None:
        """Form the next batch of an idle instance and schedule its end."""
        cfg = inst.config
        max_bs = cfg.max_batch_size
        max_bt = cfg.max_batch_tokens
        cap = inst.kv_capacity
        pre: list[int] = []
        pre_tokens = 0
        q = inst.prefill_queue
        running = inst.running
        if q:
            # on a mixed instance, decodes preempted max_preemptions times keep their slots
            reserve = self._reserved_slots(inst) if inst.tag == "mixed" else 0
            P = self._P
            used = inst.kv_used
            while q and len(pre) < max_bs - reserve:
                r = q[0]
                p = P[r]
                if pre and pre_tokens + p > max_bt:
                    break
                if used + p + 1 > cap:
                    break
                q.popleft()
                pre.append(r)
                pre_tokens += p
                used += p + 1
            inst.kv_used = used
        if inst.tag != "prompt":
            if pre:
                # decodes fill the slots and tokens the prefills leave; those at their
                # preemption limit stay even beyond the token budget (never beyond the slots)
                room_n = max_bs - len(pre)
                room = max(0, min(room_n, max_bt - pre_tokens))
                while len(running) > room and self._slot_preempt(inst):
                    pass
            else:
                room_n = room = min(max_bs, max_bt)
            if inst._pend_heap:
                self._admit(inst, room, room_n)
            while running and cap - inst.kv_used < len(running):
                self._mem_preempt(inst)
            while not running and not pre and inst._pend_heap:
                self._evict_pending(inst)  # residents fill memory, none can grow: swap one out
                self._admit(inst, room, room_n)
        b = len(running)
        if not pre and not b:
            if inst.kv_wait:
                self._try_transfers(inst)
            return
        if pre:
            k = 1
            if b:
                dt = inst.prompt_time(pre_tokens + b) * MIXED_BATCH_FACTOR
            else:
                dt = inst.prompt_time(pre_tokens)
        else:
            heap = inst._dec_heap
            while running.get(heap[0][2]) != heap[0][1]:
                heappop(heap)
            k = heap[0][0] - inst.iter_count
            kmem = (cap - inst.kv_used) // b
            if kmem < k:
                k = kmem
            dt = inst.token_time(b)
        now = self.now
        inst._run_start = now
        inst._run_dt = dt
        inst._run_k = k
        inst._run_b = b
        inst._run_prefills = pre
        inst._version += 1
        self._seq += 1
        heappush(self._heap, (now + k * dt, self._seq, _ITER, inst, inst._version))
        if self.on_iteration is not None:
            self.on_iteration(inst, len(pre), pre_tokens, b, k, dt)

    def _pause(self, inst: Instance) -> None:
        """End a run of decode iterations at the next iteration boundary."""
        if inst._run_k <= 1 or inst._run_prefills:
            return
        n_done = int((self.now - inst._run_start) / inst._run_dt)
        new_k = n_done + 1
        if new_k >= inst._run_k:
            return
        inst._run_k = new_k
        inst._version += 1
        t = inst._run_start + new_k * inst._run_dt
        self._push(t if t > self.now else self.now, _ITER, inst, inst._version)

    def _admit(self, inst: Instance, room: int, limit_room: int) -> None:
        """Move decodes with resident KV into the running batch while slots (``room``; up to
        ``limit_room`` for decodes at their preemption limit) and memory last."""
        pend = inst._pend_heap
        running = inst.running
        cap = inst.kv_capacity
        out_tok = self._O
        gen0 = self._gen0
        base = self._base
        heap = inst._dec_heap
        while (
            pend
            and (len(running) < room or (pend[0][0] == 0 and len(running) < limit_room))
            and cap - inst.kv_used >= len(running) + 1
        ):
            r = heappop(pend)[2]
            b0 = inst.iter_count - gen0[r]
            base[r] = b0
            inst._seq += 1
            running[r] = inst._seq
            heappush(heap, (b0 + out_tok[r] - 1, inst._seq, r))

    def _pend_entry(self, inst: Instance, r: int) -> tuple[int, float, int]:
        prio = 0 if self._npre[r] >= inst.config.max_preemptions else 1
        return (prio, self._arr[r], r)

    def _reserved_slots(self, inst: Instance) -> int:
        """Decodes at their preemption limit (running or waiting) on a mixed instance."""
        limit = inst.config.max_preemptions
        npre = self._npre
        n = sum(1 for r in inst.running if npre[r] >= limit)
        n += sum(1 for e in inst._pend_heap if e[0] == 0)
        return min(n, inst.config.max_batch_size, inst.config.max_batch_tokens)

    def _slot_preempt(self, inst: Instance) -> bool:
        """Take the most recently admitted decode below its preemption limit out of the batch
        (its KV stays resident); False when every running decode is at the limit."""
        limit = inst.config.max_preemptions
        r = next((x for x in reversed(inst.running) if self._npre[x] < limit), None)
        if r is None:
            return False
        del inst.running[r]
        self._gen0[r] = inst.iter_count - self._base[r]
        self._npre[r] += 1
        inst.preemptions += 1
        heappush(inst._pend_heap, self._pend_entry(inst, r))
        return True

    def _swap_out(self, inst: Instance, r: int, ctx: int) -> None:
        inst.kv_used -= ctx
        self._npre[r] += 1
        inst.preemptions += 1
        inst.kv_wait.appendleft((r, ctx, None))

    def _evict_pending(self, inst: Instance) -> None:
        """Swap out the latest-arriving decode waiting for a slot (lowest priority first)."""
        pend = inst._pend_heap
        e = max(pend)
        pend.remove(e)
        heapify(pend)
        r = e[2]
        self._swap_out(inst, r, self._P[r] + 1 + self._gen0[r])

    def _mem_preempt(self, inst: Instance) -> None:
        """Free KV for the next iteration: a waiting decode first, else a running one."""
        if inst._pend_heap:
            self._evict_pending(inst)
            return
        running = inst.running
        limit = inst.config.max_preemptions
        victim = None
        for r in reversed(running):
            if self._npre[r] < limit:
                victim = r
                break
        if victim is None:
            victim = next(reversed(running))
        del running[victim]
        g = inst.iter_count - self._base[victim]
        self._gen0[victim] = g
        self._swap_out(inst, victim, self._P[victim] + 1 + g)

    def _try_transfers(self, inst: Instance) -> None:
        """Start KV transfers / swap-ins into ``inst`` FCFS while memory allows."""
        w = inst.kv_wait
        headroom = inst.config.kv_headroom_iterations
        cap = inst.kv_capacity
        while w:
            r, n, src = w[0]
            if inst.kv_used + n + headroom * (len(inst.running) + 1) > cap:
                break
            w.popleft()
            inst.kv_used += n
            dur = n * self._kv_spt + self._lat if src is not None else n * self._swap_spt
            self._seq += 1
            heappush(self._heap, (self.now + dur, self._seq, _KV, r, (inst, src)))

    def _iter_done(self, inst: Instance) -> None:
        now = self.now
        inst.busy_time += now - inst._run_start
        k = inst._run_k
        b = inst._run_b
        pre = inst._run_prefills
        inst._run_start = -1.0
        inst._run_prefills = []
        P = self._P
        out_tok = self._O
        freed = False
        if b:
            inst.iter_count += k
            inst.kv_used += b * k
            inst.decode_iterations += k
            ic = inst.iter_count
            heap = inst._dec_heap
            running = inst.running
            while heap and heap[0][0] <= ic:
                _, s, r = heappop(heap)
                if running.get(r) != s:
                    continue
                del running[r]
                tot = P[r] + out_tok[r]
                inst.kv_used -= tot
                inst.sched_memory_tokens -= tot
                self._complete(r)
                freed = True
        if pre:
            inst.prefill_iterations += 1
            first = self._first
            for r in pre:
                first[r] = now
                p = P[r]
                inst.sched_pending_tokens -= p
                if out_tok[r] == 1:
                    inst.kv_used -= p + 1
                    inst.sched_memory_tokens -= p + 1
                    self._complete(r)
                    continue
                t = self._tinst[r]
                if t is inst:
                    self._gen0[r] = 0
                    heappush(inst._pend_heap, self._pend_entry(inst, r))
                else:
                    t.kv_wait.append((r, p + 1, inst))
                    self._try_transfers(t)
        if freed and inst.kv_wait:
            self._try_transfers(inst)
        self._start(inst)

    def _kv_done(self, r: int, inst: Instance, src: Instance | None) -> None:
        """KV of request ``r`` landed on ``inst`` (from prompt instance ``src`` or from host)."""
        if src is not None:
            n = self._P[r] + 1
            src.kv_used -= n
            src.sched_memory_tokens -= n
            if src._run_start < 0.0 and src.prefill_queue:
                self._start(src)
        heappush(inst._pend_heap, self._pend_entry(inst, r))
        if inst._run_start < 0.0:
            self._start(inst)
        elif not inst._run_prefills and len(inst.running) < min(
            inst.config.max_batch_size, inst.config.max_batch_tokens
        ):
            self._pause(inst)

    def _complete(self, r: int) -> None:
        self._finish[r] = self.now
        self._status[r] = _DONE
        self._done_idx.append(r)
        self._done_t.append(self.now)

    def _drop(self, r: int) -> None:
        self._status[r] = _DROPPED
        self._drop_idx.append(r)
        self._drop_t.append(self.now)
